import type { AlertStore } from './alert-store.ts';
import type { AlertReconciler } from './reconcile.ts';
import { isScanCheck, SCAN_CHECKS, type ScanCheck } from './scan-checks.ts';
import { describeError, UsageError } from '../../core/errors.ts';
import { findCheck, SCAN_JOB } from '../../features/registry.ts';
import { runCheck as runRegisteredCheck } from '../../features/run-check.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import { finishReport, probeFailed, type Report } from '../../core/report.ts';
import { resolveTargets } from '../../core/targets.ts';
import type { JobContext, JobData, JobDefinition } from '../../engine/job-types.ts';

export { SCAN_JOB };

/** A scheduled or requested scan: never a `reply`; what it finds goes to the alert channel. */
export interface ScanData extends JobData {
  check: ScanCheck;
  target: string;
  /** Why a watch (the management cluster's, a VM host's) asked for this scan; absent for scheduled and requested ones. */
  trigger?: string[];
}

export interface ScanDependencies {
  store: AlertStore;
  reconciler: AlertReconciler;
  redact: Redactor;
  /** Where the check jobs come from; default the registered checks (src/features/registry.ts). */
  findJob?: (name: string) => JobDefinition | undefined;
  /** The scan lock's lifetime; renewed while the scan runs, so only a crashed holder lets it lapse. Default 2 min. */
  lockTtlMs?: number;
}

/**
 * `scan`: runs one check inline for one target, then reconciles its alerts. At most one scan of
 * a (check, target) runs at a time, across workers: one that finds another running is skipped.
 */
export function createScanJob(deps: ScanDependencies): JobDefinition {
  const find = deps.findJob ?? registeredCheckJob;
  return {
    name: SCAN_JOB,
    run: async (ctx, data) => {
      const { check, target } = validScan(ctx, data);
      const triggered = Array.isArray(data.trigger);
      const requested = typeof data.requestedBy === 'string' && data.requestedBy !== '';
      const definition = find(check);
      if (!definition) throw new UsageError(`no job "${check}" is registered`, 'This build cannot run that check; see src/features/registry.ts');
      const ttl = deps.lockTtlMs ?? 120_000;
      // A scan the watch asked for saw a change the running one may have missed, and someone who
      // asked (a command, a Re-check click) is waiting to see a scan made after they asked: both
      // wait their turn. A scheduled one is skipped; the next is at most an interval away.
      const lock = await deps.store.scanLock(check, target, ttl, triggered || requested ? ttl : 0);
      if (!lock) {
        ctx.log.info({ check, target }, 'scan skipped: the previous scan of this target is still running');
        return [];
      }
      try {
        const reports = redactDeep(await runCheck(ctx, definition, check, target), deps.redact);
        await deps.reconciler.reconcile(check, target, reports, { requested, actor: triggered ? 'watch' : requested ? String(data.requestedBy) : 'scheduler' });
        return reports;
      } finally {
        await lock.release();
      }
    },
  };
}

export function registeredCheckJob(name: string): JobDefinition | undefined {
  const spec = findCheck(name);
  return spec && { name: spec.name, run: (ctx, data) => runRegisteredCheck(ctx, spec, data.target) };
}

function validScan(ctx: JobContext, data: JobData): ScanData {
  const { check, target } = data;
  if (!isScanCheck(check)) throw new UsageError(`"${String(check)}" is not a check a scan runs`, `Use one of ${Object.keys(SCAN_CHECKS).join(', ')}`);
  if (target === 'all') throw new UsageError('a scan takes one target, not "all"', 'Queue one scan per target');
  resolveTargets(ctx.config, SCAN_CHECKS[check].targetKind, target);
  return { check, target };
}

/** A check that throws is a target that could not be checked, which is itself an alert. */
export async function runCheck(ctx: JobContext, definition: JobDefinition, check: string, target: string): Promise<Report[]> {
  const startedAt = new Date();
  try {
    return await definition.run(ctx, { target });
  } catch (err) {
    ctx.log.warn({ check, target, err: describeError(err) }, 'scan: the check failed');
    return [finishReport({ kind: check, target, verdict: `Could not check ${target}`, findings: [probeFailed(target, describeError(err))] }, startedAt)];
  }
}
