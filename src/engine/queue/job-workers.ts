import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobContext, JobDefinition, LockTuning, QueuedData } from '../job-types.ts';
import { ChatopsError, describeError } from '../../core/errors.ts';
import type { Notifier, ReplyTarget } from '../notifier.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import { isLeaseError } from '../repair/plan-lease.ts';
import { worstStatus, type Report, type Status } from '../../core/report.ts';
import { CheckDedup, DEDUP_GROUP_FIELD, postTargets } from './dedup.ts';
import { repeatGate } from '../../core/repeat-gate.ts';
import { whenReady } from './connection-ready.ts';
import { DEFAULT_PREFIX, queueNameFor } from './queue-names.ts';

export interface WorkerOptions {
  connection: Redis;
  jobs: ReadonlyMap<string, JobDefinition<QueuedData>>;
  context: JobContext;
  notifier?: Notifier;
  redact: Redactor;
  prefix?: string;
  /** Per job kind; a long kind never starves another because each has its own queue and slots. */
  concurrency?: number;
  /** Per job kind, overriding `concurrency` for the kinds named. */
  concurrencyByJob?: Readonly<Record<string, number>>;
  /** Called once per run with its worst status (or `failed` when it threw) and its duration (the metrics). */
  onJobDone?: (jobName: string, outcome: Status | 'failed', seconds: number) => void;
  /** Replaces the lock tuning of every job kind that declares one (tests and benches shrink it). */
  lockOverride?: LockTuning;
}

/** BullMQ's default lock duration, for kinds that declare no tuning. */
const DEFAULT_LOCK_MS = 30_000;
/**
 * How long a worker waits after a Redis call failed for want of a connection before it asks
 * again. BullMQ's 15 s default left a worker idle for 20 s after its connection was re-opened
 * (reconnect-when-ended.ts) on a healthy new primary; the calls only fail while there is no
 * connection at all, so asking every second costs nothing.
 */
const RETRY_AFTER_CONNECTION_ERROR_MS = 1_000;

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

/** Errors that retrying cannot fix: the job fails at once. */
function isPermanent(err: unknown): boolean {
  return err instanceof ChatopsError && ['USAGE', 'UNKNOWN_TARGET', 'CONFIG_INVALID', 'GUARD_REFUSED', 'NOT_AUTHORIZED'].includes(err.code);
}

export function processorFor(definition: JobDefinition<QueuedData>, options: WorkerOptions) {
  const dedup = new CheckDedup(options.connection, options.prefix ?? DEFAULT_PREFIX);
  const lockDurationMs = lockOf(definition, options)?.lockDurationMs ?? DEFAULT_LOCK_MS;
  return async (job: Job<QueuedData>, token?: string): Promise<Report[]> => {
    const log = options.context.log.child({ jobId: job.id, job: definition.name, target: job.data.target, user: job.data.requestedBy });
    const run = token ? { job: { lock: { key: `${job.queueQualifiedName}:${job.id}:lock`, token }, lockDurationMs } } : {};
    const group = groupOf(job);
    let reports: Report[];
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      reports = redactDeep(await definition.run({ ...options.context, log, ...run }, job.data), options.redact);
      options.onJobDone?.(definition.name, worstStatus(reports.map((r) => r.status)), seconds());
    } catch (err) {
      options.onJobDone?.(definition.name, 'failed', seconds());
      if (isLeaseError(err)) {
        // Another run has (or will take) this repair: it posts; this one says nothing more.
        log.warn({ err: describeError(err) }, 'run stopped: it no longer holds the plan');
        throw err;
      }
      log.warn({ err: describeError(err) }, 'job failed');
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (isPermanent(err) || lastAttempt) {
        const told = await failureReplyOf(definition, options.context, job.data);
        const message = options.redact(`${told?.label ?? `${definition.name} ${job.data.target}`} failed: ${describeError(err)}`);
        if (group) await postToGroup(group, (target) => options.notifier!.postError(target, message));
        else if (told && options.notifier) await options.notifier.postError(told.reply, message);
        if (isPermanent(err)) throw new UnrecoverableError(describeError(err));
      }
      throw err;
    }
    // The check is done: a post that fails is logged, never a reason to run the check again.
    try {
      if (group) await postToGroup(group, (target) => options.notifier!.postReports(target, reports));
      else if (job.data.reply && !job.data.reply.errorsOnly && options.notifier) await options.notifier.postReports(job.data.reply, reports);
    } catch (err) {
      log.error({ err: describeError(err) }, 'the check ran but its result could not be posted; the check is not run again');
    }
    log.info({ statuses: reports.map((r) => r.status) }, 'job done');
    return reports;

    /** A shared check: close it to joiners, then one post per channel that asked, the first requester's included (see dedup.ts). */
    async function postToGroup(id: string, post: (target: ReplyTarget) => Promise<void>): Promise<void> {
      const waiters = [...(job.data.reply ? [job.data.reply] : []), ...(await dedup.closeAndCollect(id))];
      if (options.notifier) {
        const targets = postTargets(waiters);
        const failures = (await Promise.allSettled(targets.map(post))).filter((r) => r.status === 'rejected');
        if (failures.length) log.error({ failed: failures.length, of: targets.length, err: describeError(failures[0]!.reason) }, 'could not post a shared result to every channel; the check is not run again');
      }
      await dedup.forget(id);
      log.info({ requesters: waiters.length }, 'shared check posted');
    }
  };
}

/** Where a failure is told: the data's reply target, else the job's own answer (the execute job: the plan's thread). */
async function failureReplyOf(definition: JobDefinition<QueuedData>, ctx: JobContext, data: QueuedData): Promise<{ label: string; reply: ReplyTarget } | undefined> {
  if (data.reply) return { label: `${definition.name} ${data.target}`, reply: data.reply };
  return definition.failureReply?.(ctx, data).catch(() => undefined);
}

function groupOf(job: Job<QueuedData>): string | undefined {
  const group = job.data[DEDUP_GROUP_FIELD];
  return typeof group === 'string' && group ? group : undefined;
}

function lockOf(definition: JobDefinition, options: WorkerOptions): LockTuning | undefined {
  return definition.lock ? (options.lockOverride ?? definition.lock) : undefined;
}

/** One line per distinct worker error per 10 s in the process, however many workers (job kinds) hit it. */
const workerErrorGate = repeatGate();

export function startJobWorkers(options: WorkerOptions): RunningWorkers {
  let closing = false;
  const log = options.context.log;
  const make = (definition: JobDefinition<QueuedData>): Worker => {
    const lock = lockOf(definition, options);
    const worker = new Worker(queueNameFor(definition.name), processorFor(definition, options), {
      connection: options.connection,
      prefix: options.prefix ?? DEFAULT_PREFIX,
      concurrency: options.concurrencyByJob?.[definition.name] ?? options.concurrency ?? 4,
      // Shows in each job's processedBy: which process ran it, when several share one Redis.
      name: `${hostname()}:${process.pid}`,
      runRetryDelay: RETRY_AFTER_CONNECTION_ERROR_MS,
      ...(lock ? { lockDuration: lock.lockDurationMs, stalledInterval: lock.stalledIntervalMs, maxStalledCount: lock.maxStalledCount } : {}),
    });
    worker.on('error', (err) => {
      const { pass, held } = workerErrorGate(describeError(err));
      if (pass) log.error({ err: describeError(err), ...(held ? { repeated: held } : {}) }, 'worker error');
    });
    return worker;
  };
  const definitions = [...options.jobs.values()];
  const workers = definitions.map(make);
  /**
   * A Worker whose connection ended before it was first ready (a process started during a
   * Sentinel failover) keeps that failed start for good and never takes a job, although
   * reconnect-when-ended.ts brings the connection back: it is replaced by a fresh one once the
   * connection is ready again.
   */
  const restartIfStartFails = (index: number, restarts: number): void => {
    const worker = workers[index]!;
    const job = definitions[index]!.name;
    worker.waitUntilReady().then(
      () => {
        if (restarts) log.info({ job, restarts }, 'worker started again after its Redis connection came back');
      },
      async (err: unknown) => {
        if (closing) return;
        log.error({ job, err: describeError(err), restarts }, 'worker could not start: its Redis connection ended before it was ready; it starts again once Redis is back');
        await worker.close(true).catch(() => undefined);
        await whenReady(options.connection);
        if (closing) return;
        workers[index] = make(definitions[index]!);
        restartIfStartFails(index, restarts + 1);
      },
    );
  };
  workers.forEach((_, index) => restartIfStartFails(index, 0));
  return {
    workers,
    // close() stops taking jobs and waits for the active ones to finish. With Redis away no job can
    // finish (its result is written there), and BullMQ's close would wait for a reconnect that may
    // never come: the workers are then closed at once, and their jobs' locks lapse for another worker.
    close: async () => {
      closing = true;
      const force = options.connection.status !== 'ready';
      await Promise.all(workers.map((w) => w.close(force)));
    },
  };
}
