import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { probeSoaDirect } from '../../src/features/resolver/soa-direct.ts';

/**
 * A real dnsmasq as a rack's resolver, for tests where dnsmasq is installed:
 * `authoritative` serves the zone (NOERROR with its SOA); `servfail` is a validating forwarder
 * in front of that authoritative one, with a bogus root trust anchor, so it answers SERVFAIL
 * (EDE 6, DNSSEC Bogus) for everything, its own zone included, like the isolated maas-agent
 * resolver. (A dnsmasq forwarding to a dead upstream does not SERVFAIL: it never answers.)
 */
export type DnsmasqMode = 'authoritative' | 'servfail';

export interface DnsmasqOptions {
  mode: DnsmasqMode;
  zone?: string;
  serial?: number;
  host?: string;
  binary?: string;
}

export interface RunningDnsmasq {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Any DS digest works: the forwarder cannot validate the chain, which is the point. */
const BOGUS_ROOT_ANCHOR = '.,12345,8,2,49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE0A4F1A6F46B02A2A1C62B5E5';

export async function startDnsmasq(options: DnsmasqOptions): Promise<RunningDnsmasq> {
  const host = options.host ?? '127.0.0.1';
  const zone = options.zone ?? 'maas-internal';
  const authoritative = await startOne(options, host, [
    `--auth-server=ns1.${zone},${host}`,
    `--auth-zone=${zone}`,
    `--auth-soa=${options.serial ?? 2024010101},hostmaster.${zone}`,
  ], zone);
  if (options.mode === 'authoritative') return authoritative;
  try {
    const front = await startOne(options, host, ['--dnssec', `--trust-anchor=${BOGUS_ROOT_ANCHOR}`, `--server=${host}#${authoritative.port}`], zone);
    return { host, port: front.port, close: async () => void (await Promise.all([front.close(), authoritative.close()])) };
  } catch (err) {
    await authoritative.close();
    throw err;
  }
}

async function startOne(options: DnsmasqOptions, host: string, extra: string[], zone: string): Promise<RunningDnsmasq> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort(host);
    const child = spawn(options.binary ?? 'dnsmasq', [
      '--keep-in-foreground',
      '--conf-file=/dev/null',
      '--pid-file=',
      '--no-resolv',
      '--no-hosts',
      `--port=${port}`,
      `--listen-address=${host}`,
      '--bind-interfaces',
      '--log-facility=-',
      ...extra,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-2000)));
    try {
      await waitUntilAnswering(child, host, port, zone);
      return { host, port, close: () => stop(child) };
    } catch (err) {
      await stop(child);
      lastError = new Error(`dnsmasq did not start on ${host}:${port}: ${(err as Error).message}\n${log}`);
      if (!/in use/i.test(log)) break;
    }
  }
  throw lastError ?? new Error('dnsmasq did not start');
}

async function waitUntilAnswering(child: ChildProcess, host: string, port: number, zone: string): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
  child.once('error', (err) => (exited = err.message));
  for (let i = 0; i < 100; i++) {
    if (exited) throw new Error(exited);
    const seen = await probeSoaDirect({ host, port }, zone, { timeoutMs: 200, tries: 1 });
    if (seen.outcome === 'reply') return;
    await sleep(50);
  }
  throw new Error('no answer after 100 tries');
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** A port free for both UDP and TCP (dnsmasq binds both) on host. */
async function freePort(host: string): Promise<number> {
  for (;;) {
    const port = randomInt(20_000, 60_000);
    if ((await udpFree(host, port)) && (await tcpFree(host, port))) return port;
  }
}

function udpFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, host, () => socket.close(() => resolve(true)));
  });
}

function tcpFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
