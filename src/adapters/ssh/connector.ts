import ssh2 from 'ssh2';
import type { ClientChannel, ConnectConfig } from 'ssh2';
import { ChatopsError } from '../../core/errors.ts';
import { keyTypeOf, sha256Fingerprint } from './fingerprint.ts';
import type { PeerOutcome } from '../../core/peer-outcome.ts';
import type { SafeCommand } from './shell-quote.ts';
import { SSH_OUTPUT_CAP_BYTES, type CommandResult, type ExecOptions, type SshConnector, type SshSession, type SshTarget, type StreamingCommand } from './types.ts';
import { streamCommand } from './stream-command.ts';

const { Client, utils } = ssh2;
type Ssh2Client = InstanceType<typeof Client>;

export interface SshConnectorOptions {
  /** TCP connect plus SSH handshake and authentication (default 10 s). */
  connectTimeoutMs?: number;
  /** A command's default timeout (default 30 s); `exec(cmd, { timeoutMs })` overrides it. */
  commandTimeoutMs?: number;
  /** Channels open at once on one connection (OpenSSH allows 10 by default). */
  maxChannels?: number;
  /** Called once per connection that passed host key pinning and authentication. */
  onConnect?: (host: string) => void;
  /** Called after every connection attempt and every command, for the peer metrics. */
  onRequest?: (outcome: PeerOutcome, ms: number) => void;
}

export function createSshConnector(options: SshConnectorOptions = {}): SshConnector {
  const settings = {
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    commandTimeoutMs: options.commandTimeoutMs ?? 30_000,
    maxChannels: options.maxChannels ?? 8,
  };
  return {
    async connect(target, connectOptions) {
      const started = performance.now();
      const client = await openClient(target, connectOptions?.timeoutMs ?? settings.connectTimeoutMs).catch((err: unknown) => {
        options.onRequest?.(connectOutcome(err), performance.now() - started);
        throw err;
      });
      options.onRequest?.('ok', performance.now() - started);
      options.onConnect?.(target.host);
      return new PinnedSession(target, client, settings.commandTimeoutMs, settings.maxChannels, options.onRequest);
    },
  };
}

/** Remembers what the host offered so that a refusal can print it. */
class PinVerifier {
  offered: { fingerprint: string; type: string } | undefined;

  constructor(private readonly pins: readonly string[]) {}

  readonly verify = (key: Buffer): boolean => {
    this.offered = { fingerprint: sha256Fingerprint(key), type: keyTypeOf(key) };
    return this.pins.includes(this.offered.fingerprint);
  };
}

function openClient(target: SshTarget, timeoutMs: number): Promise<Ssh2Client> {
  checkPrivateKey(target);
  const verifier = new PinVerifier(target.hostKeys);
  const client = new Client();
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      client.destroy();
      reject(verifier.offered && !target.hostKeys.includes(verifier.offered.fingerprint) ? refusal(target, verifier.offered) : connectFailure(target, err, timeoutMs));
    };
    client.on('error', fail);
    client.once('close', () => fail(new Error('the connection closed during the handshake')));
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    const config: ConnectConfig = {
      host: target.host,
      port: target.port,
      username: target.user,
      privateKey: target.privateKey.reveal(),
      hostVerifier: verifier.verify,
      readyTimeout: timeoutMs,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 3,
      tryKeyboard: false,
    };
    client.connect(config);
    // Small request/reply exchanges: without this, Nagle plus delayed ACK adds ~40 ms per round trip.
    client.setNoDelay(true);
  });
}

/** A refused host key or key is the host saying no (client_error); no handshake in time is a timeout. */
function connectOutcome(err: unknown): PeerOutcome {
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === 'SSH_HOST_KEY_REFUSED' || /did not accept the private key/.test(String(e.message))) return 'client_error';
  if (/^no SSH handshake/.test(String(e.message))) return 'timeout';
  return 'error';
}

function checkPrivateKey(target: SshTarget): void {
  const parsed = utils.parseKey(target.privateKey.reveal());
  if (parsed instanceof Error) {
    throw new ChatopsError('SSH_FAILED', `the SSH private key from ${target.privateKey.source} cannot be used: ${parsed.message}`, {
      hint: `Point ${target.configPath ?? 'privateKey'} at an unencrypted OpenSSH or PEM private key`,
    });
  }
}

function duration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.round(ms / 1000)}s`;
}

function hostLabel(target: SshTarget): string {
  return target.port === 22 ? target.host : `${target.host}:${target.port}`;
}

function refusal(target: SshTarget, offered: { fingerprint: string; type: string }): ChatopsError {
  const where = target.configPath ?? 'the host\'s SSH settings';
  const what = target.hostKeys.length === 0
    ? `no host key is pinned for ${hostLabel(target)}; it offered ${offered.type} ${offered.fingerprint}`
    : `the host key of ${hostLabel(target)} matches none of the ${target.hostKeys.length} pinned: it offered ${offered.type} ${offered.fingerprint} (the key changed, or this is not the configured host)`;
  return new ChatopsError('SSH_HOST_KEY_REFUSED', `SSH refused: ${what}`, {
    hint: `Nothing was run there. Check the key on the host itself (ssh-keygen -lf /etc/ssh/ssh_host_${offered.type.replace(/^ssh-/, '')}_key.pub) and, if it is ${offered.fingerprint}, pin it: hostKey: "${offered.fingerprint}" under ${where}, or add the host's line to knownHosts`,
  });
}

function connectFailure(target: SshTarget, err: Error & { level?: string; code?: string }, timeoutMs: number): ChatopsError {
  const where = hostLabel(target);
  const config = target.configPath ?? 'its SSH settings';
  if (err.level === 'client-timeout') {
    return new ChatopsError('SSH_FAILED', `no SSH handshake with ${where} within ${duration(timeoutMs)}`, { cause: err, hint: `Check that ${where} is reachable from the worker and sshd answers` });
  }
  if (err.level === 'client-authentication') {
    return new ChatopsError('SSH_FAILED', `${target.user}@${where} did not accept the private key from ${target.privateKey.source}`, {
      cause: err,
      hint: `Add its public key to ~${target.user}/.ssh/authorized_keys on ${target.host}, or fix user/privateKey under ${config}`,
    });
  }
  const reason = err.code === 'ECONNREFUSED' ? 'connection refused' : err.code === 'EHOSTUNREACH' ? 'host unreachable' : err.message;
  return new ChatopsError('SSH_FAILED', `cannot open SSH to ${where}: ${reason}`, { cause: err, hint: `Check host and port under ${config} and that sshd runs there` });
}

class PinnedSession implements SshSession {
  readonly host: string;
  readonly #limiter: Limiter;
  readonly #closeListeners: (() => void)[] = [];
  #closed = false;

  constructor(
    private readonly target: SshTarget,
    private readonly client: Ssh2Client,
    private readonly defaultTimeoutMs: number,
    maxChannels: number,
    private readonly onRequest?: (outcome: PeerOutcome, ms: number) => void,
  ) {
    this.host = target.host;
    this.#limiter = new Limiter(maxChannels);
    client.on('error', () => {
      // A dropped connection fails the commands still running; they report it.
    });
    client.on('close', () => {
      this.#closed = true;
      for (const listener of this.#closeListeners.splice(0)) listener();
    });
  }

  async stream(command: SafeCommand, onLine: (line: string) => void): Promise<StreamingCommand> {
    this.#assertOpen();
    return streamCommand(this.client, hostLabel(this.target), command, onLine);
  }

  onClose(listener: () => void): void {
    if (this.#closed) queueMicrotask(listener);
    else this.#closeListeners.push(listener);
  }

  async exec(command: SafeCommand, options: ExecOptions = {}): Promise<CommandResult> {
    this.#assertOpen();
    return this.#limiter.run(async () => {
      const started = performance.now();
      try {
        const result = await runCommand(this.client, this.target, command, options.timeoutMs ?? this.defaultTimeoutMs);
        this.onRequest?.(result.timedOut ? 'timeout' : 'ok', performance.now() - started);
        return result;
      } catch (err) {
        this.onRequest?.('error', performance.now() - started);
        throw err;
      }
    });
  }

  close(): void {
    this.#closed = true;
    this.client.end();
  }

  #assertOpen(): void {
    if (this.#closed) throw new ChatopsError('SSH_FAILED', `the SSH connection to ${hostLabel(this.target)} is closed`);
  }
}

function runCommand(client: Ssh2Client, target: SshTarget, command: SafeCommand, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    let channel: ClientChannel | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (!channel) {
        reject(new ChatopsError('SSH_FAILED', `${hostLabel(target)} did not open a command channel within ${duration(timeoutMs)}`));
        return;
      }
      channel.signal('KILL');
      channel.close();
    }, timeoutMs);
    client.exec(command, (err, stream) => {
      if (err) {
        clearTimeout(timer);
        reject(new ChatopsError('SSH_FAILED', `cannot run a command on ${hostLabel(target)}: ${err.message}`, { cause: err }));
        return;
      }
      if (timedOut) {
        stream.close();
        return;
      }
      channel = stream;
      const stdout = new OutputBuffer();
      const stderr = new OutputBuffer();
      let code: number | null = null;
      let signal: string | undefined;
      let exited = false;
      stream.on('data', (chunk: Buffer) => stdout.push(chunk));
      stream.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      stream.on('exit', (exitCode: number | null, exitSignal?: string) => {
        exited = true;
        if (typeof exitCode === 'number') code = exitCode;
        else if (exitSignal) signal = exitSignal;
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (!exited && !timedOut) {
          reject(endUnknown(target));
          return;
        }
        const result: CommandResult = { stdout: stdout.text(), stderr: stderr.text(), code: timedOut ? null : code };
        if (stdout.cut) result.stdoutCut = true;
        if (stderr.cut) result.stderrCut = true;
        if (signal) result.signal = signal;
        if (timedOut) result.timedOut = true;
        resolve(result);
      });
    });
  });
}

/** No exit status and no timeout of ours: the command may have finished, or may still run. */
function endUnknown(target: SshTarget): ChatopsError {
  const where = hostLabel(target);
  return new ChatopsError('SSH_FAILED', `the SSH channel to ${where} closed before the command reported an exit status (the connection dropped, or sshd ended the session): whether it ran to the end is unknown`, {
    hint: `Check on ${target.host} whether it took effect before running it again`,
  });
}

/** Keeps the first SSH_OUTPUT_CAP_BYTES of a stream, and whether there was more: a cut reply is said to be cut, never passed off as whole. */
class OutputBuffer {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  cut = false;

  push(chunk: Buffer): void {
    const kept = chunk.subarray(0, Math.max(0, SSH_OUTPUT_CAP_BYTES - this.#size));
    if (kept.length < chunk.length) this.cut = true;
    if (!kept.length) return;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

class Limiter {
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#active++;
    try {
      return await task();
    } finally {
      this.#active--;
      this.#waiting.shift()?.();
    }
  }
}
