import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { delimiter } from 'node:path';
import ssh2 from 'ssh2';
import type { Connection, ParsedKey, ServerChannel } from 'ssh2';
import { sha256Fingerprint } from '../../src/adapters/ssh/fingerprint.ts';
import { ChannelOutput } from './channel-output.ts';
import { generateKeyPair } from './keys.ts';

const { Server, utils } = ssh2;

export interface CommandOutcome {
  stdout?: string;
  stderr?: string;
  code: number;
}

/**
 * Answers an exec'd command itself; returning undefined hands it to the real shell.
 * `user` is the authenticated SSH user.
 */
export type CommandHandler = (command: string, context: { user: string }) => CommandOutcome | undefined | Promise<CommandOutcome | undefined>;

export interface SshServerOptions {
  /** Host private key (PEM or OpenSSH); a fresh ed25519 key when absent. */
  hostKey?: string;
  /** The one client public key accepted (OpenSSH line). */
  authorizedKey: string;
  /** Loopback address to listen on (default 127.0.0.1). */
  host?: string;
  port?: number;
  /** Directories searched before the inherited PATH: where tests and the lab put stub programs. */
  pathPrefix?: string[];
  /** Extra environment for every command; its PATH, if any, replaces the inherited one (after pathPrefix). */
  env?: Record<string, string>;
  commandHandler?: CommandHandler;
}

export interface SshSimServer {
  host: string;
  port: number;
  hostKeyFingerprint: string;
  /** The host's public key as an OpenSSH line (for known_hosts). */
  hostPublicKey: string;
  /** Every exec'd command line, recorded server-side, in arrival order. */
  readonly commands: string[];
  /** Connections opened (including ones the client dropped at host key verification). */
  readonly sessions: number;
  /** Connections that passed authentication. */
  readonly authenticated: number;
  /** The user of each authenticated connection. */
  readonly users: string[];
  /** Connections open now. */
  readonly openConnections: number;
  /** Ends every open connection (a network drop, an sshd restart) and keeps listening. */
  dropConnections(): void;
  close(): Promise<void>;
}

/** An SSH server on loopback that runs exec requests in a real `/bin/sh -c`, for tests and the lab. */
export async function startSshServer(options: SshServerOptions): Promise<SshSimServer> {
  const hostKeyText = options.hostKey ?? generateKeyPair('ssh-sim-host').privateKey;
  const hostKey = utils.parseKey(hostKeyText);
  if (hostKey instanceof Error || Array.isArray(hostKey)) throw new Error(`ssh-sim: unusable host key: ${hostKey instanceof Error ? hostKey.message : 'several keys'}`);
  const authorized = utils.parseKey(options.authorizedKey);
  if (authorized instanceof Error || Array.isArray(authorized)) throw new Error('ssh-sim: authorizedKey is not one public key');
  const state = { commands: [] as string[], sessions: 0, authenticated: 0, users: [] as string[] };
  const connections = new Set<Connection>();
  const env = commandEnv(options);
  const server = new Server({ hostKeys: [hostKeyText] }, (connection) => {
    state.sessions++;
    // ssh2's server Connection has setNoDelay at run time; @types/ssh2 leaves it out.
    (connection as unknown as { setNoDelay(on: boolean): void }).setNoDelay(true);
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.on('error', () => {
      // Clients that refuse our host key drop the connection mid-handshake: expected here.
    });
    let user = '';
    connection.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey' || !sameKey(ctx.key, authorized)) return ctx.reject(['publickey']);
      if (ctx.signature && !(ctx.blob && authorized.verify(ctx.blob, ctx.signature, ctx.hashAlgo))) return ctx.reject(['publickey']);
      if (ctx.signature) {
        user = ctx.username;
        state.authenticated++;
        state.users.push(user);
      }
      ctx.accept();
    });
    connection.on('ready', () => {
      connection.on('session', (acceptSession) => {
        const session = acceptSession();
        let kill: ((signal: NodeJS.Signals) => void) | undefined;
        session.on('signal', (accept, _reject, info) => {
          accept?.();
          kill?.(`SIG${info.name}` as NodeJS.Signals);
        });
        session.on('exec', (accept, _reject, info) => {
          state.commands.push(info.command);
          const channel = accept();
          kill = runCommand(channel, info.command, user, env, options.commandHandler);
        });
        session.on('pty', (_accept, reject) => reject?.());
        session.on('shell', (_accept, reject) => reject());
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const publicBlob = hostKey.getPublicSSH();
  return {
    host: address.address,
    port: address.port,
    hostKeyFingerprint: sha256Fingerprint(publicBlob),
    hostPublicKey: `${hostKey.type} ${publicBlob.toString('base64')}`,
    get commands() {
      return state.commands;
    },
    get sessions() {
      return state.sessions;
    },
    get authenticated() {
      return state.authenticated;
    },
    get users() {
      return state.users;
    },
    get openConnections() {
      return connections.size;
    },
    dropConnections: () => {
      for (const c of connections) c.end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) c.end();
        server.close(() => resolve());
      }),
  };
}

function sameKey(offered: { algo: string; data: Buffer }, authorized: ParsedKey): boolean {
  const expected = authorized.getPublicSSH();
  return offered.algo === authorized.type && offered.data.length === expected.length && timingSafeEqual(offered.data, expected);
}

function commandEnv(options: SshServerOptions): NodeJS.ProcessEnv {
  const path = [...(options.pathPrefix ?? []), options.env?.PATH ?? process.env.PATH ?? '/usr/bin:/bin'].join(delimiter);
  return { ...process.env, ...options.env, PATH: path };
}

/** Runs one exec request; returns how to signal it. */
function runCommand(channel: ServerChannel, command: string, user: string, env: NodeJS.ProcessEnv, handler?: CommandHandler): (signal: NodeJS.Signals) => void {
  let child: ReturnType<typeof spawn> | undefined;
  let finished = false;
  const killGroup = (signal: NodeJS.Signals) => {
    if (child?.pid && !finished) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  // Unlike sshd: OpenSSH (session.c, session_close_by_channel) sends a command without a terminal
  // no signal when its channel closes, it only closes the command's pipes. The simulator kills it
  // so that a test leaves nothing running; what runs here must not rely on being killed.
  channel.on('close', () => killGroup('SIGKILL'));
  void (async () => {
    const handled = handler ? await handler(command, { user }) : undefined;
    const output = new ChannelOutput(channel);
    if (handled) {
      if (handled.stdout) output.write('stdout', handled.stdout);
      if (handled.stderr) output.write('stderr', handled.stderr);
      output.exit(handled.code);
      return;
    }
    child = spawn('/bin/sh', ['-c', command], { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    output.follow(child.stdout!, 'stdout');
    output.follow(child.stderr!, 'stderr');
    channel.pipe(child.stdin!).on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.on('error', (err) => {
      finished = true;
      output.write('stderr', `ssh-sim: ${err.message}\n`);
      output.exit(127);
    });
    child.on('close', (code, signal) => {
      finished = true;
      output.exit(code ?? (signal ?? 'KILL').replace(/^SIG/, ''));
    });
  })();
  return killGroup;
}
