import { finishReport, type Report, type ReportKind } from '../core/report.ts';
import { resolveTargets, runPerTarget, type TargetConfig } from '../core/targets.ts';
import type { AnyCheckSpec, CheckContext } from './check-spec.ts';

/** A registered check (its name is a report kind). */
export type RunnableCheck = AnyCheckSpec & { readonly name: ReportKind };

/** One target: gather, evaluate, then the optional witnesses; the report of the check. */
export async function checkTarget(ctx: CheckContext, spec: RunnableCheck, target: TargetConfig): Promise<Report> {
  const startedAt = new Date();
  const snapshot: unknown = await spec.gather(ctx, target);
  const { verdict, findings } = spec.evaluate(snapshot);
  const witnessed = spec.witness ? await spec.witness(ctx, target, findings) : findings;
  ctx.log.info({ check: spec.name, target: target.name, findings: witnessed.map((f) => f.code) }, `${spec.name} done`);
  return finishReport({ kind: spec.name, target: target.name, verdict, findings: witnessed }, startedAt);
}

/**
 * `<check> <target>|all`: one report per target; a target that cannot be read is a PROBE_FAILED
 * report, never a crash. An unknown target throws UnknownTargetError.
 */
export async function runCheck(ctx: CheckContext, spec: RunnableCheck, target: string): Promise<Report[]> {
  const targets = resolveTargets(ctx.config, spec.targetKind, target);
  return runPerTarget(spec.name, targets, (one) => checkTarget(ctx, spec, one), ctx.config.concurrency?.targets);
}
