import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { hasRedisServer, startPrivateRedis, type RedisHandle } from '../../lab/private-redis.ts';

/*
 * A private redis-server writes nothing into the checkout. A replica saves the primary's snapshot
 * to dump.rdb in its directory whatever --save says; with the default directory (the working
 * directory) the replication tests left a dump.rdb in the repository, and one was committed.
 */

const handles: RedisHandle[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  for (const h of handles.splice(0)) await h.stop();
});

async function started(): Promise<{ handle: RedisHandle; client: Redis }> {
  const handle = await startPrivateRedis();
  handles.push(handle);
  const client = new Redis(handle.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  return { handle, client };
}

async function until(probe: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(hasRedisServer())('startPrivateRedis', () => {
  it("keeps a replica's snapshot in a directory of its own, not in the working directory, and removes it on stop", async () => {
    const before = existsSync(join(process.cwd(), 'dump.rdb'));
    const primary = await started();
    const replica = await started();
    await primary.client.set('k', 'v');
    await primary.client.config('SET', 'repl-diskless-sync-delay', '0');
    await replica.client.call('REPLICAOF', '127.0.0.1', new URL(primary.handle.url).port);
    await until(async () => (await replica.client.info('replication')).includes('master_link_status:up'));
    const [, dir] = (await replica.client.config('GET', 'dir')) as [string, string];

    expect(dir).not.toBe(process.cwd());
    await until(async () => readdirSync(dir).includes('dump.rdb'));
    expect(existsSync(join(process.cwd(), 'dump.rdb')), 'a dump.rdb appeared in the working directory').toBe(before);

    await replica.handle.stop();
    expect(existsSync(dir)).toBe(false);
  });
});
