import type { JobContext, LockTuning } from '../job-types.ts';
import type { TargetKind } from '../../core/targets.ts';
import type { StepRunner } from './executor.ts';
import type { RepairKind, RepairPlan } from './plan.ts';

/**
 * BullMQ's lock for the repair kinds (docs/operations.md, "Repair runs and BullMQ's lock"): a minute
 * rides out a Redis failover or restart without a takeover; a worker that died is replaced within
 * about 75 s (lock + one stalled check); a repair that stalls is resumed, fenced, up to five times
 * rather than failed with machines left Broken.
 */
export const REPAIR_LOCK: LockTuning = { lockDurationMs: 60_000, stalledIntervalMs: 15_000, maxStalledCount: 5 };

/** One repair (fix-macs, fix-dns, fix-resolver): how to plan it from a fresh check and how to carry out its typed steps. */
export interface RepairSpec {
  kind: RepairKind;
  targetKind: TargetKind;
  /** Gathers a fresh snapshot and computes the plan; `batch`: which batch of a repair too large for one plan (default 1). */
  plan(ctx: JobContext, target: string, batch?: number): Promise<RepairPlan>;
  /** `progress`: a line for the plan's thread (or the log) while a step waits on something slow. */
  runner(ctx: JobContext, target: string, progress?: (text: string) => Promise<void>): StepRunner;
}
