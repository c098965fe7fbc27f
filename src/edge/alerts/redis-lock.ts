import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Deletes or extends the key only while it still holds our token: never someone else's lock. */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export interface HeldLock {
  readonly key: string;
  /** False once the lock expired under us (the process stalled longer than its TTL). */
  readonly held: boolean;
  release(): Promise<void>;
}

/**
 * A Redis lock (SET NX PX) kept alive every ttl/3 while held, so a long holder keeps it and a
 * crashed one loses it after `ttlMs`. Returns undefined when someone else holds it.
 */
export async function tryLock(redis: Redis, key: string, ttlMs: number): Promise<HeldLock | undefined> {
  const token = randomUUID();
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') return undefined;
  let held = true;
  const timer = setInterval(() => {
    redis.eval(EXTEND, 1, key, token, String(ttlMs)).then(
      (extended) => {
        if (extended !== 1) held = false;
      },
      () => undefined,
    );
  }, Math.max(50, Math.floor(ttlMs / 3)));
  timer.unref();
  return {
    key,
    get held() {
      return held;
    },
    async release() {
      clearInterval(timer);
      if (!held) return;
      held = false;
      await redis.eval(RELEASE, 1, key, token);
    },
  };
}

/** Waits up to `waitMs` for the lock, polling; undefined if it never came free. */
export async function waitForLock(redis: Redis, key: string, ttlMs: number, waitMs: number, pollMs = 50): Promise<HeldLock | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const lock = await tryLock(redis, key, ttlMs);
    if (lock || Date.now() >= deadline) return lock;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
