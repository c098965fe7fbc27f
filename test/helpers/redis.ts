import { randomUUID } from 'node:crypto';
export { deletePrefix } from '../../lab/redis-keys.ts';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const issued = new Set<string>();

/** A fresh BullMQ key prefix per test keeps parallel tests apart on one Redis. */
export function freshPrefix(label = 'test'): string {
  const prefix = `mct-${label}-${randomUUID().slice(0, 8)}`;
  issued.add(prefix);
  return prefix;
}

/** Every prefix this test file asked for: redis-leak-guard.ts checks that none is left in the shared Redis. */
export function issuedPrefixes(): string[] {
  return [...issued];
}

export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
