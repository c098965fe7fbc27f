import { describeError } from '../../core/errors.ts';
import { oneLine } from '../../core/one-line.ts';
import { withoutLead } from '../../core/without-lead.ts';
import type { MessageRef } from '../notifier.ts';
import { finishReport, probeFailed, type Report, type StepResult } from '../../core/report.ts';
import type { JobContext } from '../job-types.ts';
import { planReport, type RepairPlan } from './plan.ts';
import type { StoredPlan } from './plan-store.ts';
import type { RepairSpec } from './repair-spec.ts';

/** Every step refused for one reason, and the plan's own refusals after them. */
export function refuseAll(plan: RepairPlan, detail: string): StepResult[] {
  return [...plan.steps.map((s) => ({ subject: s.subject, action: s.action, outcome: 'refused' as const, detail })), ...plan.refusals];
}

export function worldChanged(plan: RepairPlan, fresh: RepairPlan, startedAt: Date, when: string): Report {
  const detail = `refused: the world changed ${when}`;
  return planReport(plan, startedAt, refuseAll(plan, detail), `${plan.kind} ${plan.target} REFUSED: the world changed ${when} (now: ${fresh.verdict})`);
}

/** A plan that is not run: every step refused with `detail`. */
export function notRun(plan: RepairPlan, startedAt: Date, detail: string): Report {
  return planReport(plan, startedAt, refuseAll(plan, detail), `${plan.kind} ${plan.target}: ${detail}`);
}

export function messageRef(stored: StoredPlan): MessageRef | undefined {
  return stored.messageTs ? { channel: stored.channel, ts: stored.messageTs } : undefined;
}

const ICON: Record<StepResult['outcome'], string> = { verified: '✅', skipped: '⏭️', refused: '⛔', failed: '❌' };

/**
 * One subject's steps on one line, the subject said once: a detail that opens with it drops it
 * (`canary site-b-node10: ✅ commission-canary verified (commissioned: Ready …)`). The subject and
 * details come from MAAS and hosts, so a line break in them is shown, not obeyed.
 */
export function progressLine(subject: string, results: readonly StepResult[]): string {
  return oneLine(`${subject}: ${results.map((r) => `${ICON[r.outcome]} ${r.action} ${r.outcome} (${withoutLead(r.detail, subject) ?? r.detail})`).join(' → ')}`);
}

/** The batch a "Plan the next batch" click asked for (job data `batch`), when it is a sane one. */
export function batchOf(data: Readonly<Record<string, unknown>>): number | undefined {
  const { batch } = data;
  return typeof batch === 'number' && Number.isInteger(batch) && batch >= 1 && batch <= 10_000 ? batch : undefined;
}

/** The plan, or the report that says it could not be made (MAAS or a host unreachable). */
export async function planOrReport(ctx: JobContext, target: string, spec: RepairSpec, startedAt: Date, batch?: number): Promise<{ plan: RepairPlan } | { report: Report }> {
  try {
    return { plan: await spec.plan(ctx, target, batch) };
  } catch (err) {
    ctx.log.warn({ kind: spec.kind, target, err: describeError(err) }, 'could not plan');
    return { report: finishReport({ kind: spec.kind, target, verdict: `Could not plan ${spec.kind} ${target}`, findings: [probeFailed(target, describeError(err))] }, startedAt) };
  }
}
