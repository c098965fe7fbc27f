import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatopsError } from '../../src/core/errors.ts';
import { generateKeyPair, knownHostsLine, startSshServer, type SshSimServer } from '../../lab/ssh-sim/index.ts';
import { Secret } from '../../src/core/secret.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';
import { knownHostsPins } from '../../src/adapters/ssh/known-hosts.ts';
import { createSessionPool } from '../../src/adapters/ssh/session-pool.ts';
import { sh } from '../../src/adapters/ssh/shell-quote.ts';
import { SSH_OUTPUT_CAP_BYTES, type SshTarget } from '../../src/adapters/ssh/types.ts';

const client = generateKeyPair('chatops-client');
const servers: SshSimServer[] = [];
const cleanups: (() => void)[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function server(options: { hostKey?: string } = {}): Promise<SshSimServer> {
  const s = await startSshServer({ authorizedKey: client.publicKey, ...options });
  servers.push(s);
  return s;
}

function targetFor(s: SshSimServer, hostKeys: string[], privateKey = client.privateKey): SshTarget {
  return { host: s.host, port: s.port, user: 'ops', privateKey: new Secret(privateKey, 'file:/secrets/rack_ed25519'), hostKeys, configPath: 'sites.site-b.rack.ssh' };
}

/** Waits (bounded) for a process to disappear. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await sleep(20);
  }
  return false;
}

async function refusal(promise: Promise<unknown>): Promise<ChatopsError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the connection to be refused');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChatopsError);
  return err as ChatopsError;
}

describe('SSH connector against a real SSH server on loopback', () => {
  it('connects to a pinned host and keeps stdout, stderr and exit status apart', async () => {
    const s = await server();
    const connected: string[] = [];
    const session = await createSshConnector({ onConnect: (h) => connected.push(h) }).connect(targetFor(s, [s.hostKeyFingerprint]));
    try {
      const result = await session.exec(sh`printf out; printf err >&2; exit 3`);
      expect(result).toEqual({ stdout: 'out', stderr: 'err', code: 3 });
    } finally {
      session.close();
    }
    expect(connected).toEqual([s.host]);
    expect(s.users).toEqual(['ops']);
  });

  it('reuses one connection for every command of a session, also concurrently', async () => {
    const s = await server();
    const session = await createSshConnector({ maxChannels: 3 }).connect(targetFor(s, [s.hostKeyFingerprint]));
    try {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => session.exec(sh`echo ${i}`)));
      expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 12 }, (_, i) => String(i)));
    } finally {
      session.close();
    }
    expect(s.sessions).toBe(1);
    expect(s.commands).toHaveLength(12);
  });

  it.each([
    ['a wrong pin', (_s: SshSimServer) => ['SHA256:QJeh7U525gG0+cB9IAzgcrEH9pk3sGI3xNrbdaTqi0c'], /matches none of the 1 pinned/],
    ['no pin at all', (_s: SshSimServer) => [], /no host key is pinned for 127\.0\.0\.1:\d+/],
  ])('refuses %s before anything runs, printing the offered fingerprint and how to pin it', async (_name, pins, message) => {
    const s = await server();
    const err = await refusal(createSshConnector().connect(targetFor(s, pins(s))));
    expect(err.code).toBe('SSH_HOST_KEY_REFUSED');
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`ssh-ed25519 ${s.hostKeyFingerprint}`);
    expect(err.describe()).toContain(`hostKey: "${s.hostKeyFingerprint}" under sites.site-b.rack.ssh`);
    expect(err.describe()).toContain('ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub');
    expect(s.sessions).toBe(1);
    expect(s.authenticated).toBe(0);
    expect(s.commands).toEqual([]);
  });

  it('refuses a host whose key changed since it was pinned', async () => {
    const before = await server();
    const pin = before.hostKeyFingerprint;
    const port = before.port;
    await before.close();
    servers.splice(servers.indexOf(before), 1);
    const after = await server();
    expect(after.hostKeyFingerprint).not.toBe(pin);
    const err = await refusal(createSshConnector().connect({ ...targetFor(after, [pin]) }));
    expect(err.code).toBe('SSH_HOST_KEY_REFUSED');
    expect(err.message).toContain(`offered ssh-ed25519 ${after.hostKeyFingerprint}`);
    expect(err.message).toContain('the key changed, or this is not the configured host');
    expect(after.authenticated).toBe(0);
    expect(after.commands).toEqual([]);
    expect(port).toBeGreaterThan(0);
  });

  it('accepts a host pinned through an OpenSSH known_hosts line', async () => {
    const hostKey = generateKeyPair('host');
    const s = await server({ hostKey: hostKey.privateKey });
    const pins = knownHostsPins(knownHostsLine(s.host, s.port, hostKey.publicKey), s.host, s.port);
    expect(pins).toEqual([hostKey.fingerprint]);
    const session = await createSshConnector().connect(targetFor(s, pins));
    try {
      expect((await session.exec(sh`echo ok`)).stdout).toBe('ok\n');
    } finally {
      session.close();
    }
  });

  it('says which key the host did not accept when authentication fails', async () => {
    const s = await server();
    const stranger = generateKeyPair('stranger');
    const err = await refusal(createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint], stranger.privateKey)));
    expect(err.code).toBe('SSH_FAILED');
    expect(err.message).toBe(`ops@127.0.0.1:${s.port} did not accept the private key from file:/secrets/rack_ed25519`);
    expect(err.describe()).not.toContain('PRIVATE KEY');
    expect(s.commands).toEqual([]);
  });

  it('reports the connection and every command to the peer metrics; a key the host refuses is client_error', async () => {
    const s = await server();
    const seen: string[] = [];
    const connector = createSshConnector({ onRequest: (outcome) => void seen.push(outcome) });
    const session = await connector.connect(targetFor(s, [s.hostKeyFingerprint]));
    try {
      await session.exec(sh`true`);
      await session.exec(sh`exit 1`);
    } finally {
      session.close();
    }
    await refusal(connector.connect(targetFor(s, [s.hostKeyFingerprint], generateKeyPair('stranger').privateKey)));
    await refusal(connector.connect(targetFor(s, [`SHA256:${'A'.repeat(43)}`])));
    expect(seen).toEqual(['ok', 'ok', 'ok', 'client_error', 'client_error']);
  });

  it('refuses an unusable private key without printing it', async () => {
    const s = await server();
    const err = await refusal(createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint], 'not a key at all, secret-ish')));
    expect(err.code).toBe('SSH_FAILED');
    expect(err.describe()).toMatch(/the SSH private key from file:\/secrets\/rack_ed25519 cannot be used/);
    expect(err.describe()).not.toContain('secret-ish');
    expect(s.sessions).toBe(0);
  });

  it('reports a refused connection', async () => {
    const s = await server();
    const port = s.port;
    await s.close();
    servers.splice(0);
    const err = await refusal(createSshConnector().connect({ ...targetFor(s, ['SHA256:x']), port }));
    expect(err.code).toBe('SSH_FAILED');
    expect(err.message).toBe(`cannot open SSH to 127.0.0.1:${port}: connection refused`);
  });

  it('gives up on a host that accepts TCP but never speaks SSH, at the connect timeout', async () => {
    const sockets = new Set<Socket>();
    const mute = createServer((socket) => sockets.add(socket));
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      mute.close();
    });
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const port = (mute.address() as { port: number }).port;
    const target: SshTarget = { host: '127.0.0.1', port, user: 'ops', privateKey: new Secret(client.privateKey, 'test'), hostKeys: [] };
    const err = await refusal(createSshConnector({ connectTimeoutMs: 300 }).connect(target));
    expect(err.code).toBe('SSH_FAILED');
    expect(err.message).toMatch(/^no SSH handshake with 127\.0\.0\.1:\d+ within 300ms$/);
  });

  it('stops a command at its timeout, kills it on the server and keeps the connection usable', async () => {
    const s = await server();
    const session = await createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint]));
    try {
      const slow = await session.exec(sh`echo $$; exec sleep 30`, { timeoutMs: 300 });
      expect(slow).toMatchObject({ code: null, timedOut: true });
      const pid = Number(slow.stdout.trim());
      expect(pid).toBeGreaterThan(1);
      expect(await gone(pid)).toBe(true);
      const next = await session.exec(sh`echo still here`);
      expect(next).toEqual({ stdout: 'still here\n', stderr: '', code: 0 });
    } finally {
      session.close();
    }
    expect(s.sessions).toBe(1);
  });

  it('says when a reply ran past the output cap and was cut, and not when it fits exactly', async () => {
    const s = await server();
    const session = await createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint]));
    try {
      const over = await session.exec(sh`head -c ${SSH_OUTPUT_CAP_BYTES + 1} /dev/zero | tr '\\0' a; head -c ${SSH_OUTPUT_CAP_BYTES + 5} /dev/zero | tr '\\0' e >&2`);
      expect(over).toMatchObject({ code: 0, stdoutCut: true, stderrCut: true });
      expect(over.stdout).toHaveLength(SSH_OUTPUT_CAP_BYTES);
      expect(over.stderr).toHaveLength(SSH_OUTPUT_CAP_BYTES);
      const exact = await session.exec(sh`head -c ${SSH_OUTPUT_CAP_BYTES} /dev/zero | tr '\\0' a`);
      expect(exact.stdout).toHaveLength(SSH_OUTPUT_CAP_BYTES);
      expect(exact).not.toHaveProperty('stdoutCut');
    } finally {
      session.close();
    }
  });

  it('says a command\'s outcome is unknown when the connection drops before its exit status, never "exit null"', async () => {
    const s = await server();
    const dir = mkdtempSync(join(tmpdir(), 'ssh-drop-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [writing, marker] = [join(dir, 'pid.new'), join(dir, 'pid')];
    const session = await createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint]));
    const running = session.exec(sh`echo $$ > ${writing}; mv ${writing} ${marker}; exec sleep 30`);
    const outcome = running.then(() => 'resolved', (e: unknown) => e);
    for (let i = 0; i < 250 && !existsSync(marker); i++) await sleep(20);
    const pid = Number(readFileSync(marker, 'utf8'));
    s.dropConnections();
    const err = await outcome;
    expect(err).toBeInstanceOf(ChatopsError);
    expect((err as ChatopsError).code).toBe('SSH_FAILED');
    expect((err as ChatopsError).message).toMatch(/^the SSH channel to 127\.0\.0\.1:\d+ closed before the command reported an exit status .*whether it ran to the end is unknown$/);
    expect(await gone(pid)).toBe(true);
    expect(s.commands).toHaveLength(1);
  });

  it('fails commands on a closed session with an error a person can read', async () => {
    const s = await server();
    const session = await createSshConnector().connect(targetFor(s, [s.hostKeyFingerprint]));
    session.close();
    await expect(session.exec(sh`true`)).rejects.toThrow(/SSH connection to 127\.0\.0\.1:\d+ is closed/);
  });
});

describe('session pool', () => {
  it('opens one connection per host for a job, however many ask at once, and closes them all', async () => {
    const a = await server();
    const b = await server();
    const connects: string[] = [];
    const pool = createSessionPool(createSshConnector({ onConnect: (h) => connects.push(h) }));
    const runs = [a, b, a, a, b].map(async (s) => (await pool.session(targetFor(s, [s.hostKeyFingerprint]))).exec(sh`echo ${s.port}`));
    const results = await Promise.all(runs);
    expect(results.map((r) => Number(r.stdout))).toEqual([a.port, b.port, a.port, a.port, b.port]);
    expect([a.sessions, b.sessions]).toEqual([1, 1]);
    expect(connects).toHaveLength(2);
    pool.closeAll();
  });

  it('does not keep a failed connection: the next job tries again', async () => {
    const s = await server();
    const pool = createSessionPool(createSshConnector());
    await expect(pool.session(targetFor(s, []))).rejects.toThrow(/no host key is pinned/);
    const session = await pool.session(targetFor(s, [s.hostKeyFingerprint]));
    expect((await session.exec(sh`echo ok`)).stdout).toBe('ok\n');
    pool.closeAll();
    expect(s.sessions).toBe(2);
  });
});
