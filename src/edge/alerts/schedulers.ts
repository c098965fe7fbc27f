import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { scheduledScans, type ScanCheck } from './scan-checks.ts';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { SCAN_JOB } from '../../features/registry.ts';
import { DEFAULT_PREFIX, queueNameFor } from '../../engine/queue/queue-names.ts';

/** The queue scans run on: the scan job's name maps to it. */
export const SCAN_QUEUE_JOB = SCAN_JOB;
const SCHEDULER_PREFIX = 'scan:';

export interface SyncSchedulersOptions {
  connection: Redis;
  prefix?: string;
  config: Config;
  log?: Logger;
}

export interface SyncResult {
  /** Scheduler ids now in place. */
  upserted: string[];
  /** Scheduler ids removed because their config entry is gone. */
  removed: string[];
}

/** Stable per (check, target): every worker upserts the same id, so none is ever doubled. */
export function schedulerIdFor(check: ScanCheck, target: string): string {
  return `${SCHEDULER_PREFIX}${check}:${target}`;
}

/**
 * Makes the BullMQ job schedulers of the `scan` queue match config.schedules: one per
 * applicable (check, target), at its interval; those whose entry went away are removed.
 * Safe to run at every start of every worker: upserting an unchanged scheduler keeps its
 * next run time (BullMQ's addJobScheduler script reuses prevMillis when `every` is unchanged).
 */
export async function syncSchedulers(options: SyncSchedulersOptions): Promise<SyncResult> {
  const queue = new Queue(queueNameFor(SCAN_QUEUE_JOB), { connection: options.connection, prefix: options.prefix ?? DEFAULT_PREFIX, skipWaitingForReady: true });
  // Without a listener BullMQ prints each connection error as a raw stack trace on stderr; the
  // shared connection's errors are logged once by the runtime, and a failed sync rejects below.
  queue.on('error', () => undefined);
  try {
    const wanted = scheduledScans(options.config);
    const upserted: string[] = [];
    for (const scan of wanted) {
      const id = schedulerIdFor(scan.check, scan.target);
      await queue.upsertJobScheduler(
        id,
        { every: scan.everyMs },
        {
          name: SCAN_QUEUE_JOB,
          data: { check: scan.check, target: scan.target },
          // A failed scan is not retried: the next one is at most one interval away.
          opts: { attempts: 1, removeOnComplete: { count: 200 }, removeOnFail: { count: 500 } },
        },
      );
      upserted.push(id);
    }
    const keep = new Set(upserted);
    const removed: string[] = [];
    for (const existing of await queue.getJobSchedulers(0, -1)) {
      const id = existing.key;
      if (!id.startsWith(SCHEDULER_PREFIX) || keep.has(id)) continue;
      await queue.removeJobScheduler(id);
      removed.push(id);
    }
    options.log?.info({ schedulers: upserted.length, removed }, 'scan schedulers in place');
    return { upserted, removed };
  } finally {
    await queue.close();
  }
}
