/**
 * The wait before retry number `failures` (1, 2, …): doubling from `baseMs` up to `maxMs`, drawn
 * from the upper half of that ceiling, so many processes that lost a peer together do not all
 * come back together.
 */
export function jitteredBackoffMs(failures: number, backoff: { baseMs: number; maxMs: number }, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (failures - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
