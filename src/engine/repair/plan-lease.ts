import type { Redis } from 'ioredis';

/**
 * Who may act on a plan right now. A run takes the lease with a fencing token from INCR (every
 * taker gets a larger one), renews it while it runs, and every journal write and every external
 * write is preceded by one atomic check in Redis that the lease still carries that token (and,
 * under BullMQ, that the job's lock is still this run's). A run that fails the check has been
 * replaced, or has been away longer than the lease: it stops before its next write.
 */
export interface PlanLease {
  /** This run's fencing token: larger than every earlier run's for this plan. */
  readonly token: number;
  /** True once a check failed or the lease went unconfirmed for longer than it lasts. Never false again. */
  readonly lost: boolean;
  /** Checks, atomically, that the lease is still ours, and extends it. Throws LeaseLostError. */
  check(): Promise<void>;
  /** check(), and in the same atomic step HSETs `field` of `hashKey`: how the journal is written. */
  checkAndSet(hashKey: string, field: string, value: string): Promise<void>;
  /** Stops renewing and gives the lease up (only if it is still ours). */
  release(): Promise<void>;
}

/** The BullMQ lock of the job this run belongs to: the lease is only ours while the lock is too. */
export interface JobLock {
  key: string;
  token: string;
}

export class LeaseLostError extends Error {
  constructor(planId: string, why: string) {
    super(`plan ${planId}: this run no longer holds the plan (${why}); it stops before its next write`);
    this.name = 'LeaseLostError';
  }
}

/** Another run holds the plan and did not let go in time: this run did nothing. */
export class LeaseBusyError extends Error {
  constructor(planId: string, waitedMs: number) {
    super(`plan ${planId} is held by another run (waited ${Math.round(waitedMs / 1000)} s); nothing was done by this one`);
    this.name = 'LeaseBusyError';
  }
}

/** Errors that say "another run has this plan": the run ends quietly, without a Slack post. */
export function isLeaseError(err: unknown): boolean {
  return err instanceof LeaseLostError || err instanceof LeaseBusyError;
}

// KEYS[1] lease, KEYS[2] fence counter, KEYS[3] job lock (optional); ARGV ttlMs, keepMs, lock token
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if KEYS[3] and redis.call('GET', KEYS[3]) ~= ARGV[3] then return -1 end
local token = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
`;

// KEYS[1] lease, KEYS[2] hash to write (optional), KEYS[3] job lock (optional);
// ARGV token, ttlMs, field ('' for none), value, lock token. An absent key is passed as the lease
// key itself, never as '': an ACL user limited to the prefix's keys may not name the key ''.
const CHECK = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if KEYS[3] ~= KEYS[1] and redis.call('GET', KEYS[3]) ~= ARGV[5] then return -1 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[3], ARGV[4]) end
return 1
`;

// KEYS[1] lease; ARGV token
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface LeaseOptions {
  planId: string;
  leaseKey: string;
  fenceKey: string;
  /** How long the lease lasts without a renewal: the BullMQ lockDuration of the job. */
  ttlMs: number;
  /** How long the fence counter is kept (as long as the plan). */
  keepMs: number;
  jobLock?: JobLock;
  /** How long to wait for an earlier run's lease to lapse (default: ttlMs + 2 s). */
  waitMs?: number;
  now?: () => number;
}

/** Takes the plan's lease, waiting for an earlier run's to lapse; renews it every ttl/3 until released or lost. */
export async function acquirePlanLease(redis: Redis, options: LeaseOptions): Promise<PlanLease> {
  const now = options.now ?? Date.now;
  const { planId, leaseKey, ttlMs, jobLock } = options;
  const lockKeys = jobLock ? [jobLock.key] : [];
  const waitMs = options.waitMs ?? ttlMs + 2_000;
  const startedAt = now();
  let token = 0;
  for (;;) {
    const answer = Number(await redis.eval(ACQUIRE, 2 + lockKeys.length, leaseKey, options.fenceKey, ...lockKeys, ttlMs, options.keepMs, jobLock?.token ?? ''));
    if (answer > 0) {
      token = answer;
      break;
    }
    if (answer === -1) throw new LeaseLostError(planId, 'the job lock is no longer this run’s');
    if (now() - startedAt > waitMs) throw new LeaseBusyError(planId, now() - startedAt);
    await new Promise((r) => setTimeout(r, Math.min(250, ttlMs / 4)));
  }

  let lost: string | undefined;
  let confirmedAt = startedAt;
  const fail = (why: string): never => {
    lost ??= why;
    throw new LeaseLostError(planId, lost);
  };
  const run = async (hashKey: string, field: string, value: string): Promise<void> => {
    if (lost) fail(lost);
    if (now() - confirmedAt > ttlMs) fail(`not renewed for over ${ttlMs} ms`);
    const sentAt = now();
    const answer = Number(await redis.eval(CHECK, 3, leaseKey, hashKey || leaseKey, jobLock?.key ?? leaseKey, token, ttlMs, field, value, jobLock?.token ?? ''));
    if (answer === 0) fail('the lease lapsed or another run took it');
    if (answer === -1) fail('the job lock lapsed or another run took it');
    // Extended when Redis ran the script, which was after we sent it.
    confirmedAt = Math.max(confirmedAt, sentAt);
  };
  let renewing = false;
  const timer = setInterval(() => {
    if (renewing) return; // Redis is slow or away: one renewal waits for it, not a pile
    renewing = true;
    run('', '', '')
      .catch(() => undefined)
      .finally(() => (renewing = false));
  }, Math.max(50, Math.floor(ttlMs / 3)));
  timer.unref();

  return {
    token,
    get lost() {
      return lost !== undefined || now() - confirmedAt > ttlMs;
    },
    check: () => run('', '', ''),
    checkAndSet: (hashKey, field, value) => run(hashKey, field, value),
    async release() {
      clearInterval(timer);
      if (!lost) await redis.eval(RELEASE, 1, leaseKey, token);
      lost ??= 'released';
    },
  };
}
