import { vi } from 'vitest';

export interface ScheduledWait<T> {
  ms: number;
  /** What the probe read when the wait was scheduled, and when it ended (absent while it runs). */
  scheduled: T;
  fired?: T;
}

/**
 * Every delay handed to setTimeout while watched, with what `probe` read (say, the calls a peer
 * has seen) when it was scheduled and when it fired: a test reads what was waited for and what
 * happened meanwhile, never the clock. The timers still run as asked.
 */
export function watchWaits<T>(probe: () => T): { waits: ScheduledWait<T>[]; restore(): void } {
  const original = globalThis.setTimeout;
  const waits: ScheduledWait<T>[] = [];
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
    const wait: ScheduledWait<T> = { ms: ms ?? 0, scheduled: probe() };
    waits.push(wait);
    return original((...args: unknown[]) => {
      wait.fired = probe();
      fn(...args);
    }, ms, ...rest);
  }) as typeof setTimeout);
  return { waits, restore: () => spy.mockRestore() };
}
