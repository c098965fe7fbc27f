export interface RetryPolicy {
  /** How many times a failed attempt is repeated (0 = one attempt only). */
  retries: number;
  /** Base delay; attempt n waits about backoffMs * 2^(n-1), with jitter. */
  backoffMs: number;
}

/** Exponential backoff with "equal jitter": between half and all of the doubled delay. */
export function backoffDelay(policy: RetryPolicy, retryNumber: number, random: () => number = Math.random): number {
  const ceiling = policy.backoffMs * 2 ** Math.max(0, retryNumber - 1);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `attempt` until it succeeds, `shouldRetry` says no, or the retries run out.
 * The last error is rethrown; `attempts` tells the caller how many were made.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  attempt: (attemptNumber: number) => Promise<T>,
  shouldRetry: (err: unknown) => boolean,
): Promise<T> {
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt(attemptNumber);
    } catch (err) {
      if (attemptNumber > policy.retries || !shouldRetry(err)) throw err;
      await sleep(backoffDelay(policy, attemptNumber));
    }
  }
}
