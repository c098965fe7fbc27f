import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh BullMQ key prefix per test keeps parallel tests apart on one Redis. */
export function freshPrefix(label = 'test'): string {
  return `mct-${label}-${randomUUID().slice(0, 8)}`;
}

/** Deletes every key under a prefix (SCAN, bounded). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  for (let i = 0; i < 10_000; i++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
    if (cursor === '0') return;
  }
}

export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
