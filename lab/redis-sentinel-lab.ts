import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { botAclLine } from '../src/engine/queue/redis-acl.ts';
import { dieWithParent } from './die-with-parent.ts';
import { freePort } from './private-redis.ts';

/**
 * A production-shaped Redis on loopback, for the failover tests and the bench: a primary, one
 * replica and three sentinels (quorum 2), every one a real `redis-server` process. The default
 * user is the operator's (replication, Sentinel); the bot logs in as an ACL user holding exactly
 * the rule of docs/operations.md. The sentinels require a password of their own.
 */
export interface RedisProcess {
  port: number;
  child: ChildProcess;
  /** SIGKILL: no goodbye to the replicas or the sentinels, as when a machine dies. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing is answered (kill() still works). */
  freeze(): void;
}

export interface SentinelLab {
  name: string;
  primary: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** The bot's environment: REDIS_SENTINELS, REDIS_SENTINEL_NAME and both logins. */
  env: Record<string, string>;
  user: string;
  /** An operator's connection (default user) to one node. */
  admin(port: number): Redis;
  /** The primary's port as the sentinels name it now. */
  currentPrimaryPort(): Promise<number | undefined>;
  /** Denied commands and keys the ACL log recorded on a node (operator's view). */
  aclDenials(port: number): Promise<string[]>;
  close(): Promise<void>;
}

export interface SentinelLabOptions {
  /** The bot's queue prefix: the ACL user may touch only keys under it. */
  prefix: string;
  /** Sentinel's down-after-milliseconds; small keeps a test short. Default 1000. */
  downAfterMs?: number;
}

export async function startSentinelLab(options: SentinelLabOptions): Promise<SentinelLab> {
  const dir = mkdtempSync(join(tmpdir(), 'mct-sentinel-'));
  const name = 'chatops-primary';
  const adminPassword = secret();
  const sentinelPassword = secret();
  const user = 'maas-chatops';
  const userPassword = secret();
  const started: RedisProcess[] = [];
  const admins: Redis[] = [];
  try {
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    const nodeConf = (port: number, extra: string[] = []) =>
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'save ""',
        'appendonly no',
        'maxmemory-policy noeviction',
        // Sync a new replica at once (the default waits 5 s for more replicas to share the transfer).
        'repl-diskless-sync-delay 0',
        `requirepass ${adminPassword}`,
        `masterauth ${adminPassword}`,
        botAclLine(user, userPassword, options.prefix),
        `dir ${dir}`,
        `logfile ${join(dir, `redis-${port}.log`)}`,
        ...extra,
      ].join('\n');
    const primary = await startProcess(dir, primaryPort, nodeConf(primaryPort), [], adminPassword);
    started.push(primary);
    const replica = await startProcess(dir, replicaPort, nodeConf(replicaPort, [`replicaof 127.0.0.1 ${primaryPort}`]), [], adminPassword);
    started.push(replica);
    const sentinels: RedisProcess[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `logfile ${join(dir, `sentinel-${port}.log`)}`,
        `requirepass ${sentinelPassword}`,
        `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
        `sentinel auth-pass ${name} ${adminPassword}`,
        `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${name} 10000`,
        `sentinel parallel-syncs ${name} 1`,
      ].join('\n');
      const s = await startProcess(dir, port, conf, ['--sentinel'], sentinelPassword);
      started.push(s);
      sentinels.push(s);
    }
    const admin = (port: number) => {
      const isSentinel = sentinels.some((s) => s.port === port);
      const client = new Redis({ host: '127.0.0.1', port, password: isSentinel ? sentinelPassword : adminPassword, maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: false });
      client.on('error', () => undefined);
      admins.push(client);
      return client;
    };
    const replicaAdmin = admin(replicaPort);
    await waitFor(async () => (await replicaAdmin.info('replication')).includes('master_link_status:up'), 'the replica to sync');
    for (const s of sentinels) {
      const client = admin(s.port);
      await waitFor(async () => {
        const master = flat((await client.call('SENTINEL', 'MASTER', name)) as string[]);
        return master['num-slaves'] === '1' && master['num-other-sentinels'] === '2';
      }, `sentinel ${s.port} to see the replica and the other sentinels`);
    }
    return {
      name,
      primary,
      replica,
      sentinels,
      user,
      env: {
        REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
        REDIS_SENTINEL_NAME: name,
        REDIS_SENTINEL_PASSWORD: sentinelPassword,
        REDIS_USERNAME: user,
        REDIS_PASSWORD: userPassword,
      },
      admin,
      currentPrimaryPort: async () => {
        for (const s of sentinels) {
          if (s.child.exitCode !== null) continue;
          const client = admin(s.port);
          try {
            const addr = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string] | null;
            if (addr) return Number(addr[1]);
          } catch {
            // the next sentinel
          } finally {
            client.disconnect();
          }
        }
        return undefined;
      },
      aclDenials: async (port: number) => {
        const client = admin(port);
        try {
          const entries = (await client.call('ACL', 'LOG')) as unknown[][];
          return entries.map((e) => {
            const f = flat(e.map(String));
            const client = (f['client-info'] ?? '').split(' ').filter((kv) => /^(name|cmd|addr)=/.test(kv)).join(' ');
            return `${f.reason} ${f.object} (user ${f.username}; ${client})`;
          });
        } finally {
          client.disconnect();
        }
      },
      close: async () => {
        for (const c of admins) c.disconnect();
        await Promise.all(started.map((p) => p.kill()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const c of admins) c.disconnect();
    await Promise.all(started.map((p) => p.kill()));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function startProcess(dir: string, port: number, conf: string, args: string[], password: string): Promise<RedisProcess> {
  const file = join(dir, `${port}.conf`);
  writeFileSync(file, `${conf}\n`, { mode: 0o600 });
  const child = spawn('redis-server', [file, ...args], { stdio: 'ignore' });
  dieWithParent(child);
  const proc: RedisProcess = {
    port,
    child,
    freeze: () => void child.kill('SIGSTOP'),
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
  const probe = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  probe.on('error', () => undefined);
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited (${child.exitCode}); see ${dir}`);
      if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
      return probe.status === 'ready' && (await probe.ping().catch(() => '')) === 'PONG';
    }, `redis-server on port ${port}`);
  } catch (err) {
    await proc.kill();
    throw err;
  } finally {
    probe.disconnect();
  }
  return proc;
}

async function waitFor(predicate: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate().catch((err: unknown) => (err instanceof Error && err.message.includes('exited') ? Promise.reject(err) : false))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function flat(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i] as string] = list[i + 1] as string;
  return out;
}

function secret(): string {
  return randomBytes(12).toString('hex');
}
