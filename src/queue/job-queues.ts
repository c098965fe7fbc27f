import { withTimeout } from '../with-timeout.ts';
import { randomUUID } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobData } from '../../jobs/types.ts';
import { ChatopsError } from '../errors.ts';
import type { Redactor } from '../redact.ts';
import { CheckDedup, DEDUP_GROUP_FIELD, DEDUPLICATED_JOBS, type Submitted } from './dedup.ts';
import { DEFAULT_PREFIX, queueNameFor } from './queue-names.ts';

export type { JoinedCheck, Submitted } from './dedup.ts';

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
}

export interface JobQueuesOptions {
  /** Job kinds whose identical requests share one run; default DEDUPLICATED_JOBS (the checks, never a repair). */
  dedupJobs?: ReadonlySet<string>;
  /** How long after the first request an identical one joins it; default 60 s. */
  dedupWindowMs?: number;
}

/** The producer side: the bot enqueues here. */
export class JobQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #dedup: CheckDedup;
  readonly #dedupJobs: ReadonlySet<string>;

  constructor(
    private readonly connection: Redis,
    private readonly redact: Redactor,
    private readonly prefix: string = DEFAULT_PREFIX,
    private readonly timeoutMs = 2_000,
    options: JobQueuesOptions = {},
  ) {
    this.#dedup = new CheckDedup(connection, prefix, options.dedupWindowMs === undefined ? {} : { windowMs: options.dedupWindowMs });
    this.#dedupJobs = options.dedupJobs ?? DEDUPLICATED_JOBS;
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
  async enqueue(jobName: string, data: JobData, options: EnqueueOptions = {}): Promise<string> {
    return (await this.submit(jobName, data, options)).id;
  }

  /** Like enqueue, and says whether the request joined a check that was already queued or running. */
  async submit(jobName: string, data: JobData, options: EnqueueOptions = {}): Promise<Submitted> {
    assertNoSecret(data, this.redact);
    const opts: JobsOptions = { ...DEFAULT_JOB_OPTIONS };
    if (options.jobId) opts.jobId = options.jobId;
    if (options.attempts) opts.attempts = options.attempts;
    if (!this.deduplicates(jobName, options)) {
      const job = await queueAnswer(this.#add(jobName, data, opts), this.timeoutMs);
      return { id: job.id ?? '' };
    }
    return queueAnswer(this.#joinOrAdd(jobName, data, opts), this.timeoutMs);
  }

  deduplicates(jobName: string, options: EnqueueOptions = {}): boolean {
    return this.#dedupJobs.has(jobName) && options.dedup !== false && !options.jobId;
  }

  async #joinOrAdd(jobName: string, data: JobData, opts: JobsOptions): Promise<Submitted> {
    const id = randomUUID();
    const result = await this.#dedup.joinOrOpen(jobName, data.target, id, data.reply, data.requestedBy);
    if (!result.opened) return { id: result.joined.id, joined: result.joined };
    try {
      await this.#add(jobName, { ...data, [DEDUP_GROUP_FIELD]: id }, { ...opts, jobId: id });
    } catch (err) {
      await this.#dedup.abandon(jobName, data.target, id).catch(() => undefined);
      throw err;
    }
    return { id };
  }

  /**
   * A BullMQ Queue made while Redis was down (at the bot's start) keeps its failed initialisation
   * and refuses every job even once Redis is back: drop it, and when the connection is up again,
   * try once more with a fresh one.
   */
  async #add(jobName: string, data: JobData, opts: JobsOptions) {
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

/** Job data is stored in clear text in Redis: refuse anything the redactor would change. */
export function assertNoSecret(data: unknown, redact: Redactor): void {
  const json = JSON.stringify(data);
  if (redact(json) !== json) throw new ChatopsError('GUARD_REFUSED', 'refusing to queue a job whose data holds a secret');
}

const REDIS_HINT = 'Check REDIS_URL and that Redis is running; then try again';

/** The queue's answer within `ms`, or an error a person can act on. */
function queueAnswer<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withTimeout(promise, ms, () => new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) did not answer', { hint: REDIS_HINT })).catch((err: unknown) => {
    if (err instanceof ChatopsError) throw err;
    throw new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) refused the job', { hint: REDIS_HINT, cause: err });
  });
}
