/**
 * Counts wrong credentials per client address in a sliding window; an address with `maxFailures`
 * inside the window is locked out (even with the right password) until its oldest failure ages
 * out. Bounded: at most `maxClients` addresses are tracked, the stalest dropped first.
 */
export interface LoginThrottleOptions {
  /** Default 5. */
  maxFailures?: number;
  /** Default 15 minutes. */
  windowMs?: number;
  /** Default 10 000. */
  maxClients?: number;
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
  const failures = new Map<string, number[]>();

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
      if (kept.length < maxFailures) return 0;
      return kept[kept.length - maxFailures]! + windowMs - now();
    },
    fail(client) {
      const kept = [...recent(client), now()];
      failures.delete(client);
      failures.set(client, kept);
      if (failures.size > maxClients) failures.delete(failures.keys().next().value!);
      return kept.length;
    },
  };
}
