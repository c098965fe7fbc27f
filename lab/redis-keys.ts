import type { Redis } from 'ioredis';

/** Deletes every key under a prefix (SCAN, bounded): the lab's and the tests' cleanup. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let i = 0; i < 10_000; i++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}
