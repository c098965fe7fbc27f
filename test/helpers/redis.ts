import { randomUUID } from 'node:crypto';
export { deletePrefix } from '../../lab/redis-keys.ts';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh BullMQ key prefix per test keeps parallel tests apart on one Redis. */
export function freshPrefix(label = 'test'): string {
  return `mct-${label}-${randomUUID().slice(0, 8)}`;
}

export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
