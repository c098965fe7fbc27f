/**
 * Lets one report of a repeating event through per window and counts the ones it held back: a
 * Redis that stays away makes every BullMQ worker fail the same way at every reconnect attempt.
 */
export function repeatGate(windowMs = 10_000, now: () => number = Date.now): (key: string) => { pass: boolean; held: number } {
  const seen = new Map<string, { at: number; held: number }>();
  return (key) => {
    const entry = seen.get(key);
    const t = now();
    if (entry && t - entry.at < windowMs) {
      entry.held += 1;
      return { pass: false, held: entry.held };
    }
    seen.set(key, { at: t, held: 0 });
    return { pass: true, held: entry?.held ?? 0 };
  };
}
