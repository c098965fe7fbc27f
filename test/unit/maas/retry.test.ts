import { describe, expect, it } from 'vitest';
import { backoffDelay, withRetry } from '../../../src/maas/retry.ts';

describe('backoffDelay', () => {
  it.each([
    [1, 0, 50],
    [1, 1, 100],
    [2, 0, 100],
    [3, 1, 400],
  ])('retry %i with random %f → %i ms (base 100)', (retry, random, expected) => {
    expect(backoffDelay({ retries: 5, backoffMs: 100 }, retry, () => random)).toBe(expected);
  });
});

describe('withRetry', () => {
  it('repeats until success and stops there', async () => {
    let calls = 0;
    const result = await withRetry(
      { retries: 4, backoffMs: 0 },
      async () => {
        calls += 1;
        if (calls < 3) throw new Error('flaky');
        return 'done';
      },
      () => true,
    );
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('makes retries + 1 attempts at most, then throws the last error', async () => {
    let calls = 0;
    await expect(
      withRetry(
        { retries: 2, backoffMs: 0 },
        async (n) => {
          calls += 1;
          throw new Error(`attempt ${n}`);
        },
        () => true,
      ),
    ).rejects.toThrow('attempt 3');
    expect(calls).toBe(3);
  });

  it('does not repeat what shouldRetry refuses', async () => {
    let calls = 0;
    await expect(
      withRetry(
        { retries: 5, backoffMs: 0 },
        async () => {
          calls += 1;
          throw new Error('4xx');
        },
        () => false,
      ),
    ).rejects.toThrow('4xx');
    expect(calls).toBe(1);
  });
});
