import { afterAll, beforeAll } from 'vitest';
import { Redis } from 'ioredis';
import { DEFAULT_PREFIX } from '../../src/engine/queue/queue-names.ts';
import { issuedPrefixes, TEST_REDIS_URL } from './redis.ts';

/*
 * The Redis at 6379 is shared by every test file, the lab and other people's runs: a file that
 * leaves keys under its prefixes fails here, after its own cleanup hooks (this hook is registered
 * first, so it runs last), naming the prefix and a few keys. A file must not write under the
 * production prefix (DEFAULT_PREFIX) at all: the keys there before the file ran are compared with
 * those after it. With no Redis to reach there is nothing that could be left.
 */
let defaultKeysBefore: Set<string> | undefined;

beforeAll(async () => {
  defaultKeysBefore = await withRedis(async (redis) => new Set(await keysUnder(redis, DEFAULT_PREFIX)));
});

afterAll(async () => {
  const left = await withRedis(async (redis) => {
    const found: string[] = [];
    for (const prefix of issuedPrefixes()) {
      const keys = await keysUnder(redis, prefix);
      if (keys.length) found.push(`${prefix} (${keys.length} keys, e.g. ${keys.slice(0, 3).join(', ')})`);
    }
    const written = defaultKeysBefore ? (await keysUnder(redis, DEFAULT_PREFIX)).filter((k) => !defaultKeysBefore?.has(k)) : [];
    if (written.length) found.push(`the production prefix ${DEFAULT_PREFIX} (${written.length} keys new since the file started, e.g. ${written.slice(0, 3).join(', ')}; pass a freshPrefix() to what wrote them; if the lab or another run was using the default prefix at the same time, run this file again alone)`);
    return found;
  });
  if (left?.length) {
    throw new Error(`this file left keys in the shared Redis at ${TEST_REDIS_URL}: ${left.join('; ')}. Delete them in afterEach or afterAll (deletePrefix from test/helpers/redis.ts) once what wrote them is closed.`);
  }
});

/** Runs `use` on a short-lived connection; undefined when Redis cannot be reached. */
async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T | undefined> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch {
    redis.disconnect();
    return undefined;
  }
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}
