import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobData } from '../../jobs/types.ts';
import { ChatopsError } from '../errors.ts';
import type { Redactor } from '../redact.ts';
import { DEFAULT_PREFIX, queueNameFor } from './queue-names.ts';

export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { count: 1_000, age: 24 * 3600 },
  removeOnFail: { count: 5_000, age: 7 * 24 * 3600 },
};

export interface EnqueueOptions {
  jobId?: string;
  attempts?: number;
}

/** The producer side: the bot enqueues here. */
export class JobQueues {
  readonly #queues = new Map<string, Queue>();

  constructor(
    private readonly connection: Redis,
    private readonly redact: Redactor,
    private readonly prefix: string = DEFAULT_PREFIX,
    private readonly timeoutMs = 2_000,
  ) {}

  queue(jobName: string): Queue {
    let q = this.#queues.get(jobName);
    if (!q) {
      q = new Queue(queueNameFor(jobName), { connection: this.connection, prefix: this.prefix, skipWaitingForReady: true });
      this.#queues.set(jobName, q);
    }
    return q;
  }

  async enqueue(jobName: string, data: JobData, options: EnqueueOptions = {}): Promise<string> {
    assertNoSecret(data, this.redact);
    const opts: JobsOptions = { ...DEFAULT_JOB_OPTIONS };
    if (options.jobId) opts.jobId = options.jobId;
    if (options.attempts) opts.attempts = options.attempts;
    const job = await withTimeout(this.queue(jobName).add(jobName, data, opts), this.timeoutMs);
    return job.id ?? '';
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

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) did not answer', { hint: 'Check REDIS_URL and that Redis is running; then try again' })),
      ms,
    );
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(new ChatopsError('REDIS_UNAVAILABLE', 'the job queue (Redis) refused the job', { hint: 'Check REDIS_URL and that Redis is running; then try again', cause: err }));
      },
    );
  });
}
