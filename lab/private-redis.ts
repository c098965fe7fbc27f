import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dieWithParent } from './die-with-parent.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface RedisHandle {
  url: string;
  /** Set when we started our own redis-server. */
  child?: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL: what a crash does; with AOF on, what was fsynced survives into the next start. */
  kill?(): Promise<void>;
}

export interface PrivateRedisOptions {
  /** Persist with AOF (appendfsync always) in this directory, so that a restart on the same port and directory gets the data back. */
  appendOnlyDir?: string;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function redisAnswers(url: string, timeoutMs = 800): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, enableOfflineQueue: false });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export function hasRedisServer(env: NodeJS.ProcessEnv = process.env): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore', env }).status === 0;
}

/** Starts a throwaway redis-server on a free (or the given) loopback port, without persistence unless asked. */
export async function startPrivateRedis(requestedPort?: number, options: PrivateRedisOptions = {}): Promise<RedisHandle> {
  const port = requestedPort ?? (await freePort());
  // Always a directory of its own: a replica writes the primary's snapshot to dump.rdb in its
  // directory even with --save '', and the default is the caller's working directory (the checkout).
  const scratch = options.appendOnlyDir ? undefined : mkdtempSync(join(tmpdir(), 'maas-chatops-redis-'));
  const dir = options.appendOnlyDir ?? (scratch as string);
  const persistence = options.appendOnlyDir ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence, '--maxmemory-policy', 'noeviction'], {
    stdio: 'ignore',
  });
  dieWithParent(child);
  if (scratch) child.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await redisAnswers(url, 200)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  return { url, child, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** REDIS_URL when Redis answers there; else a private redis-server; else null. */
export async function findOrStartRedis(env: NodeJS.ProcessEnv): Promise<RedisHandle | null> {
  const url = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (await redisAnswers(url)) return { url, stop: async () => undefined };
  if (hasRedisServer(env)) return startPrivateRedis();
  return null;
}
