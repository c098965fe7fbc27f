import type { LockTuning } from '../../src/engine/job-types.ts';

/**
 * The repair kinds' BullMQ lock, shrunk for the outage tests: the events (lock and lease lapse,
 * stalled job handed out again, fenced takeover) are the same as with the production minute, as
 * long as Redis stays away longer than the lock. OUTAGE_MS does, by half again.
 */
export const OUTAGE_LOCK: LockTuning = { lockDurationMs: 4_000, stalledIntervalMs: 1_000, maxStalledCount: 5 };
export const OUTAGE_MS = 6_000;

export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
