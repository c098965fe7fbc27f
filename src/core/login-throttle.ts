/**
 * Counts wrong credentials per client address in a sliding window; an address with `maxFailures`
 * inside the window is locked out (even with the right password) until its oldest failure ages
 * out. Bounded: at most `maxClients` addresses are tracked, the stalest dropped first. A global cap
 * holds as well: `maxGlobalFailures` wrong attempts from all addresses together inside
 * `globalWindowMs` lock every address until the oldest of them ages out, so many addresses (a /24,
 * a botnet) cannot each take their own five.
 */
export interface LoginThrottleOptions {
  /** Default 5. */
  maxFailures?: number;
  /** Default 15 minutes. */
  windowMs?: number;
  /** Default 10 000. */
  maxClients?: number;
  /** Wrong attempts from all addresses together; default 100. */
  maxGlobalFailures?: number;
  /** Default 1 minute. */
  globalWindowMs?: number;
  now?: () => number;
}

export interface LoginThrottle {
  /** Milliseconds until `client` may try again; 0 when it may try now. */
  lockedFor(client: string): number;
  /** Records a wrong attempt; returns the failures now inside the window. */
  fail(client: string): number;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const maxFailures = options.maxFailures ?? 5;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const maxClients = options.maxClients ?? 10_000;
  const now = options.now ?? Date.now;
  const maxGlobal = options.maxGlobalFailures ?? 100;
  const globalWindowMs = options.globalWindowMs ?? 60_000;
  const failures = new Map<string, number[]>();
  /** The latest wrong attempts from anywhere, at most maxGlobal of them. */
  let everywhere: number[] = [];

  const globalLockMs = (): number => {
    everywhere = everywhere.filter((at) => at > now() - globalWindowMs);
    return everywhere.length < maxGlobal ? 0 : everywhere[0]! + globalWindowMs - now();
  };

  const recent = (client: string): number[] => {
    const cutoff = now() - windowMs;
    const kept = (failures.get(client) ?? []).filter((at) => at > cutoff);
    if (kept.length) failures.set(client, kept);
    else failures.delete(client);
    return kept;
  };

  return {
    lockedFor(client) {
      const kept = recent(client);
      const own = kept.length < maxFailures ? 0 : kept[kept.length - maxFailures]! + windowMs - now();
      return Math.max(own, globalLockMs());
    },
    fail(client) {
      everywhere = [...everywhere, now()].slice(-maxGlobal);
      const kept = [...recent(client), now()];
      failures.delete(client);
      failures.set(client, kept);
      if (failures.size > maxClients) failures.delete(failures.keys().next().value!);
      return kept.length;
    },
  };
}
