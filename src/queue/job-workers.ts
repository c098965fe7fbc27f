import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobContext, JobData, JobDefinition } from '../../jobs/types.ts';
import { ChatopsError, describeError } from '../errors.ts';
import type { Notifier } from '../notifier.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import type { Report } from '../report.ts';
import { DEFAULT_PREFIX, queueNameFor } from './queue-names.ts';

export interface WorkerOptions {
  connection: Redis;
  jobs: ReadonlyMap<string, JobDefinition>;
  context: JobContext;
  notifier?: Notifier;
  redact: Redactor;
  prefix?: string;
  /** Per job kind; a long kind never starves another because each has its own queue and slots. */
  concurrency?: number;
}

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

/** Errors that retrying cannot fix: the job fails at once. */
function isPermanent(err: unknown): boolean {
  return err instanceof ChatopsError && ['USAGE', 'UNKNOWN_TARGET', 'CONFIG_INVALID', 'GUARD_REFUSED', 'NOT_AUTHORIZED'].includes(err.code);
}

export function processorFor(definition: JobDefinition, options: WorkerOptions) {
  return async (job: Job<JobData>): Promise<Report[]> => {
    const log = options.context.log.child({ jobId: job.id, job: definition.name, target: job.data.target, user: job.data.requestedBy });
    let reports: Report[];
    try {
      reports = redactDeep(await definition.run({ ...options.context, log }, job.data), options.redact);
    } catch (err) {
      log.warn({ err: describeError(err) }, 'job failed');
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (isPermanent(err) || lastAttempt) {
        if (job.data.reply && options.notifier) {
          await options.notifier.postError(job.data.reply, options.redact(`${definition.name} ${job.data.target} failed: ${describeError(err)}`));
        }
        if (isPermanent(err)) throw new UnrecoverableError(describeError(err));
      }
      throw err;
    }
    if (job.data.reply && options.notifier) await options.notifier.postReports(job.data.reply, reports);
    log.info({ statuses: reports.map((r) => r.status) }, 'job done');
    return reports;
  };
}

export function startJobWorkers(options: WorkerOptions): RunningWorkers {
  const workers = [...options.jobs.values()].map(
    (definition) =>
      new Worker(queueNameFor(definition.name), processorFor(definition, options), {
        connection: options.connection,
        prefix: options.prefix ?? DEFAULT_PREFIX,
        concurrency: options.concurrency ?? 4,
      }),
  );
  for (const w of workers) w.on('error', (err) => options.context.log.error({ err: describeError(err) }, 'worker error'));
  return {
    workers,
    // close() stops taking jobs and waits for the active ones to finish.
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
