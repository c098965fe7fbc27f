import { withTimeout } from '../../core/with-timeout.ts';
import { randomUUID } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobData, QueuedData } from '../job-types.ts';
import { ChatopsError } from '../../core/errors.ts';
import type { Redactor } from '../../core/redact.ts';
import { CheckDedup, DEDUP_GROUP_FIELD, deduplicationId, type Submitted } from './dedup.ts';
import { whenReady } from './connection-ready.ts';
import { DEFAULT_PREFIX, queueNameFor } from './queue-names.ts';

export type { JoinedCheck, Submitted } from './dedup.ts';

/** One try at queuing a request; set abandoned when the answer no longer waits for it. */
interface Attempt {
  abandoned: boolean;
}

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { count: 1_000, age: 24 * 3600 },
  removeOnFail: { count: 5_000, age: 7 * 24 * 3600 },
};

export interface EnqueueOptions {
  jobId?: string;
  attempts?: number;
  /** false: queue a job of its own even for a check that is already queued or running. */
  dedup?: boolean;
  /**
   * BullMQ deduplication under this id: no second job while one with it is queued or running, or,
   * with `ms`, while one was added within that time (even one already done).
   */
  oncePer?: { id: string; ms?: number };
}

export interface JobQueuesOptions {
  /** Job kinds whose identical requests share one run (while it is queued or running); none by default: the composition root passes the registry's DEDUPLICATED_JOBS (the checks, never a repair). */
  dedupJobs?: ReadonlySet<string>;
  /** Redis is a Sentinel-managed primary: a lost connection is a failover, and the answer says so. */
  failover?: boolean;
  /** Replicas that must hold a job before the user hears it is queued (Redis WAIT); default 1 with failover, else 0. */
  replicasToWait?: number;
  /** How long a job whose add was cut off by a lost connection waits for the (new) primary to ask again; default 8 s. */
  recoveryMs?: number;
}

/** The producer side: the bot enqueues here. */
export class JobQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #dedup: CheckDedup;
  readonly #dedupJobs: ReadonlySet<string>;
  readonly #failover: boolean;
  readonly #replicasToWait: number;
  readonly #recoveryMs: number;
  #noReplicaUntil = 0;
  #waitOnWire: Promise<void> | undefined;
  #nextWait: Promise<void> | undefined;

  constructor(
    private readonly connection: Redis,
    private readonly redact: Redactor,
    private readonly prefix: string = DEFAULT_PREFIX,
    private readonly timeoutMs = 2_000,
    options: JobQueuesOptions = {},
  ) {
    this.#dedup = new CheckDedup(connection, prefix);
    this.#dedupJobs = options.dedupJobs ?? new Set();
    this.#failover = options.failover ?? false;
    this.#replicasToWait = options.replicasToWait ?? (this.#failover ? 1 : 0);
    this.#recoveryMs = options.recoveryMs ?? 8_000;
  }

  queue(jobName: string): Queue {
    let q = this.#queues.get(jobName);
    if (!q) {
      q = new Queue(queueNameFor(jobName), { connection: this.connection, prefix: this.prefix, skipWaitingForReady: true });
      // Without a listener BullMQ prints every connection error; enqueue reports them to the user instead.
      q.on('error', () => undefined);
      this.#queues.set(jobName, q);
    }
    return q;
  }

  /** Queues a job; returns its id (for a check already queued or running: that check's id). */
  async enqueue(jobName: string, data: QueuedData, options: EnqueueOptions = {}): Promise<string> {
    return (await this.submit(jobName, data, options)).id;
  }

  /** Like enqueue, and says whether the request joined a check that was already queued or running. */
  async submit(jobName: string, data: QueuedData, options: EnqueueOptions = {}): Promise<Submitted> {
    assertNoSecret(data, this.redact);
    const dedup = this.deduplicates(jobName, options) && hasTarget(data);
    // The id is chosen here, not by Redis: asking again after a lost connection cannot add a second job.
    const id = options.jobId ?? randomUUID();
    const opts: JobsOptions = { ...DEFAULT_JOB_OPTIONS, jobId: id };
    if (options.attempts) opts.attempts = options.attempts;
    if (options.oncePer) opts.deduplication = { id: options.oncePer.id, ...(options.oncePer.ms ? { ttl: options.oncePer.ms } : {}) };
    const joined = new Set<string>();
    // Told "failing over" after all: a copy that still reaches Redis must neither run nor post.
    const revoke = async () => {
      await this.queue(jobName).remove(id);
      for (const run of joined) await this.#dedup.leave(run, data.reply);
    };
    if (!dedup || !hasTarget(data)) return this.#answered(async () => ({ id: (await this.#add(jobName, data, opts)).id ?? id }), revoke);
    return this.#answered((attempt) => this.#addOrJoin(jobName, data, opts, id, attempt, joined), revoke);
  }

  deduplicates(jobName: string, options: EnqueueOptions = {}): boolean {
    return this.#dedupJobs.has(jobName) && options.dedup !== false && !options.jobId && !options.oncePer;
  }

  /**
   * A check: BullMQ adds it, or (its deduplication id taken by an identical check queued or
   * running) answers with that check's id, which this request then joins as a waiter. A run
   * that closed in between (its result is being posted) is not joined: the request gets its own.
   */
  async #addOrJoin(jobName: string, data: JobData, opts: JobsOptions, id: string, attempt: Attempt, joined: Set<string>): Promise<Submitted> {
    const shared: JobsOptions = { ...opts, deduplication: { id: deduplicationId(jobName, data.target) } };
    const run = (await this.#add(jobName, { ...data, [DEDUP_GROUP_FIELD]: id }, shared)).id ?? id;
    if (run === id) return { id };
    // An attempt given up on (its connection was lost) must not go on joining in the background.
    if (attempt.abandoned) throw new Error('Connection is closed (attempt abandoned)');
    joined.add(run);
    const check = await this.#dedup.join(this.queue(jobName), run, data.reply);
    if (check) return { id: run, joined: check };
    joined.delete(run);
    return { id: (await this.#add(jobName, data, opts)).id ?? id };
  }

  /**
   * Exactly one answer per request, also across a failover. Not connected (within a second):
   * refused, and nothing was sent, so nothing runs later. Connection lost while the job was on its way: its
   * fate is unknown, so wait for the (new) primary and add it again under the same id (BullMQ
   * adds an id once); only then, and once a replica holds it, is the user told it is queued.
   */
  async #answered<T>(run: (attempt: Attempt) => Promise<T>, giveUp?: () => Promise<void>): Promise<T> {
    const deadline = Date.now() + this.#recoveryMs;
    for (let tries = 1; ; tries++) {
      if (this.connection.status !== 'ready') {
        // Nothing sent yet: a connection being made may take a moment; a primary that is gone will not come back in one.
        if (tries === 1 && !(await waitUntilReady(this.connection, CONNECT_GRACE_MS))) throw this.#notConnected();
        if (!(await waitUntilReady(this.connection, deadline - Date.now()))) {
          if (giveUp) void revokeWhenBack(this.connection, giveUp);
          throw this.#notConnected();
        }
      }
      const attempt: Attempt = { abandoned: false };
      try {
        const result = await queueAnswer(run(attempt), this.timeoutMs);
        await this.#replicated();
        return result;
      } catch (err) {
        attempt.abandoned = true;
        const lost = isConnectionLoss((err as { cause?: unknown }).cause ?? err, this.connection);
        if (lost && tries < 5 && Date.now() < deadline) continue;
        // Sent, and the answer is "no": whatever part of it still lands must not run.
        if (giveUp) void revokeWhenBack(this.connection, giveUp);
        throw lost ? this.#notConnected() : err;
      }
    }
  }

  /**
   * With replicas: the job survives the primary's death once one of them has it. WAIT blocks the
   * shared connection and covers every write sent on it before, so concurrent requests share one
   * WAIT (at most one on the wire, one gathering), and a primary without a replica (just after a
   * failover) is not asked again for a while.
   */
  async #replicated(): Promise<void> {
    if (this.#replicasToWait <= 0 || Date.now() < this.#noReplicaUntil) return;
    if (!this.#nextWait) {
      const previous = this.#waitOnWire ?? Promise.resolve();
      const next = previous.catch(() => undefined).then(async () => {
        this.#nextWait = undefined;
        this.#waitOnWire = next;
        try {
          if (Date.now() < this.#noReplicaUntil) return;
          const acked = await queueAnswer(this.connection.wait(this.#replicasToWait, REPLICA_WAIT_MS), this.timeoutMs);
          if (acked < this.#replicasToWait) this.#noReplicaUntil = Date.now() + NO_REPLICA_PAUSE_MS;
        } finally {
          if (this.#waitOnWire === next) this.#waitOnWire = undefined;
        }
      });
      this.#nextWait = next;
    }
    await this.#nextWait;
  }

  #notConnected(): ChatopsError {
    if (this.#failover) {
      return new ChatopsError('REDIS_UNAVAILABLE', 'the job queue is failing over to a new Redis primary, so nothing was queued', { hint: 'Try again in a few seconds' });
    }
    return new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) is unavailable', { hint: `Nothing was queued. ${REDIS_HINT}` });
  }

  /**
   * A BullMQ Queue made while Redis was down (at the bot's start) keeps its failed initialisation
   * and refuses every job even once Redis is back: drop it, and when the connection is up again,
   * try once more with a fresh one.
   */
  async #add(jobName: string, data: QueuedData, opts: JobsOptions) {
    const queue = this.queue(jobName);
    try {
      return await queue.add(jobName, data, opts);
    } catch (err) {
      if (this.#queues.get(jobName) !== queue) throw err;
      this.#queues.delete(jobName);
      queue.close().catch(() => undefined);
      if (this.connection.status !== 'ready') throw err;
      return this.queue(jobName).add(jobName, data, opts);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
  }
}

/** A check's data names its target: only such a job can share a run with an identical request. */
function hasTarget(data: QueuedData): data is JobData {
  return typeof data.target === 'string';
}

/** Job data is stored in clear text in Redis: refuse anything the redactor would change. */
export function assertNoSecret(data: unknown, redact: Redactor): void {
  const json = JSON.stringify(data);
  if (redact(json) !== json) throw new ChatopsError('GUARD_REFUSED', 'refusing to queue a job whose data holds a secret');
}

/** How long a job waits for a replica to hold it; and how long a primary found without one is not asked again. */
const REPLICA_WAIT_MS = 200;
/** How long a request waits for a connection that is not up before it is told the queue is unavailable. */
const CONNECT_GRACE_MS = 1_000;
const NO_REPLICA_PAUSE_MS = 5_000;

const REDIS_HINT = 'Check REDIS_URL and that Redis is running; then try again';

/** The connection dropped (or was never there), as opposed to Redis answering with an error. */
function isConnectionLoss(err: unknown, connection: Redis): boolean {
  if (connection.status !== 'ready') return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Connection is closed|Stream isn't writeable|MaxRetriesPerRequest|ECONNRESET|ECONNREFUSED|EPIPE|READONLY/.test(message);
}

/**
 * Once the connection is back: ioredis resends the commands that were on the wire when it broke
 * right after 'ready', in the same tick; what runs a tick later reaches Redis after them.
 */
async function revokeWhenBack(connection: Redis, revoke: () => Promise<void>): Promise<void> {
  if (!(await waitUntilReady(connection, 60_000))) return;
  await new Promise((r) => setImmediate(r));
  await revoke().catch(() => undefined);
}

/** Resolves true once the connection is ready, false after `ms`. */
function waitUntilReady(connection: Redis, ms: number): Promise<boolean> {
  if (connection.status === 'ready') return Promise.resolve(true);
  if (ms <= 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    void whenReady(connection).then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The queue's answer within `ms`, or an error a person can act on. */
function queueAnswer<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withTimeout(promise, ms, () => new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) did not answer', { hint: REDIS_HINT })).catch((err: unknown) => {
    if (err instanceof ChatopsError) throw err;
    throw new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) refused the job', { hint: REDIS_HINT, cause: err });
  });
}
