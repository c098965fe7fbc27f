import { afterAll } from 'vitest';
import { Redis } from 'ioredis';
import { issuedPrefixes, TEST_REDIS_URL } from './redis.ts';

/*
 * The Redis at 6379 is shared by every test file, the lab and other people's runs: a file that
 * leaves keys under its prefixes fails here, after its own cleanup hooks (this hook is registered
 * first, so it runs last), naming the prefix and a few keys. With no Redis to reach there is
 * nothing that could be left.
 */
afterAll(async () => {
  const prefixes = issuedPrefixes();
  if (!prefixes.length) return;
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch {
    redis.disconnect();
    return;
  }
  try {
    const left: string[] = [];
    for (const prefix of prefixes) {
      const keys = await keysUnder(redis, prefix);
      if (keys.length) left.push(`${prefix} (${keys.length} keys, e.g. ${keys.slice(0, 3).join(', ')})`);
    }
    if (left.length) {
      throw new Error(`this file left keys in the shared Redis at ${TEST_REDIS_URL}: ${left.join('; ')}. Delete them in afterEach or afterAll (deletePrefix from test/helpers/redis.ts) once what wrote them is closed.`);
    }
  } finally {
    redis.disconnect();
  }
});

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
