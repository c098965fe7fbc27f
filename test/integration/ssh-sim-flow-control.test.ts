import { setTimeout as sleep } from 'node:timers/promises';
import ssh2 from 'ssh2';
import type { ClientChannel } from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeyPair, startSshServer, type SshSimServer } from '../../lab/ssh-sim/index.ts';

const MiB = 1024 * 1024;
const key = generateKeyPair('flow-client');
const opened: { server: SshSimServer; client: InstanceType<typeof ssh2.Client> }[] = [];

afterEach(async () => {
  for (const { server, client } of opened.splice(0)) {
    client.end();
    await server.close();
  }
});

async function connect(): Promise<InstanceType<typeof ssh2.Client>> {
  const server = await startSshServer({ authorizedKey: key.publicKey });
  const client = new ssh2.Client();
  opened.push({ server, client });
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve()).once('error', reject);
    client.connect({ host: server.host, port: server.port, username: 'ops', privateKey: key.privateKey, hostVerifier: () => true });
  });
  return client;
}

/** Waits (bounded) for a condition; the bound only stops a broken run from hanging. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await sleep(10);
  if (!condition()) throw new Error(`never happened: ${what}`);
}

/** What the client still lets the server send on this channel: 0 means the server is waiting for us. */
function windowLeft(channel: ClientChannel): number {
  return (channel as unknown as { incoming: { window: number } }).incoming.window;
}

describe('lab SSH server under SSH flow control', () => {
  it('delivers every byte of stdout and stderr, then the exit status, to a client that fell behind on each in turn', async () => {
    const client = await connect();
    const channel = await new Promise<ClientChannel>((resolve, reject) =>
      client.exec(`head -c ${5 * MiB} /dev/zero; read go; head -c ${5 * MiB} /dev/zero >&2; exit 7`, (err, ch) => (err ? reject(err) : resolve(ch))),
    );
    channel.pause();
    channel.stderr.pause();
    const got = { stdout: 0, stderr: 0, exits: [] as unknown[], beforeExit: { stdout: -1, stderr: -1 } };
    channel.on('data', (chunk: Buffer) => (got.stdout += chunk.length));
    channel.stderr.on('data', (chunk: Buffer) => (got.stderr += chunk.length));
    channel.on('exit', (code: unknown) => {
      got.exits.push(code);
      got.beforeExit = { stdout: got.stdout, stderr: got.stderr };
    });
    const closed = new Promise<void>((resolve) => channel.on('close', () => resolve()));

    await until(() => windowLeft(channel) === 0, 'the server waiting on stdout');
    channel.resume();
    await until(() => got.stdout === 5 * MiB, 'all of stdout read');
    channel.write('go\n');
    await until(() => windowLeft(channel) === 0, 'the server waiting on stderr');
    channel.stderr.resume();
    await closed;

    expect(got).toEqual({ stdout: 5 * MiB, stderr: 5 * MiB, exits: [7], beforeExit: { stdout: 5 * MiB, stderr: 5 * MiB } });
  });
});
