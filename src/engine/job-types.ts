import type { Adapters } from '../adapters/adapters.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/log.ts';
import type { Notifier, ReplyTarget } from './notifier.ts';
import type { PlanStore } from './repair/plan-store.ts';
import type { AuditLog } from './audit/audit-log.ts';
import type { JobLock } from './repair/plan-lease.ts';
import type { Metrics } from './metrics.ts';
import type { Report } from '../core/report.ts';

export interface JobContext {
  config: Config;
  adapters: Adapters;
  log: Logger;
  signal?: AbortSignal;
  /** Repairs (fix-macs, fix-dns): plans, approvals and journals in Redis. Absent in the CLI. */
  plans?: PlanStore;
  /** Repairs post their plan, progress and summary themselves. Absent in the CLI. */
  notifier?: Notifier;
  /** The audit trail: repair steps are recorded here. Absent in the CLI. */
  audit?: AuditLog;
  /** Under a BullMQ worker: this run's job lock and how long it lasts (a repair's lease follows it). */
  job?: { lock?: JobLock; lockDurationMs: number };
  /** Time for long waits (following a commissioning); tests give a fake clock. Default: the real one. */
  clock?: { now(): number; sleep(ms: number): Promise<void> };
  /** Repairs and their steps are counted here. Absent in the CLI. */
  metrics?: Pick<Metrics, 'recordRepair' | 'recordRepairStep'>;
}

/** What the worker reads from any queued job's data (clear text in Redis: names and Slack ids only, never a secret). */
export type QueuedData = { target?: string; reply?: ReplyTarget; requestedBy?: string; [key: string]: unknown };

/** Job data of a check or a repair's plan, as stored in Redis (clear text): names and Slack ids only, never a secret. */
export interface JobData {
  target: string;
  reply?: ReplyTarget;
  requestedBy?: string;
  [key: string]: unknown;
}

/** BullMQ's lock settings for a job kind whose runs are long (the repairs); see docs/operations.md. */
export interface LockTuning {
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
}

export interface JobDefinition<D extends QueuedData = JobData> {
  name: string;
  /** Absent: BullMQ's defaults (30 s lock, checked every 30 s, failed after one stall). */
  lock?: LockTuning;
  /** Returns one report per target (a target of `all` gives several). */
  run(ctx: JobContext, data: D): Promise<Report[]>;
  /** For data that names no reply target: where a failure is told, and how the job is named there ("fix-macs site-b"). */
  failureReply?(ctx: JobContext, data: D): Promise<{ label: string; reply: ReplyTarget } | undefined>;
}
