import { describeError } from '../../core/errors.ts';
import type { StepOutcome, StepResult } from '../../core/report.ts';
import type { PlanStep } from './plan-step.ts';
import type { Journal } from './journal.ts';
import { isLeaseError, LeaseLostError, type PlanLease } from './plan-lease.ts';
import { stepsBySubject, subjectCount, type RepairPlan } from './plan.ts';
import type { RepairEvents } from './repair-events.ts';
import { stepWriter, type WriteGuard, type WriteRoute } from './write-guard.ts';

export interface StepContext {
  planId: string;
  /** An earlier run sent (or may have sent) a write of this step and did not finish it: read what it did before acting. */
  resumed: boolean;
  /**
   * Every external write of the step goes through here (MAAS and kube writes do so by themselves
   * through the fenced adapters; an SSH command that changes something calls it): fenced by the
   * lease, journaled before and after, and never sent again after an earlier run's unproven send
   * unless it is idempotent.
   */
  write: WriteGuard;
}

/** Carries out one kind of step: reads first, acts only if needed, reads back. Never throws for MAAS answers. */
export interface StepRunner {
  run(step: PlanStep, context: StepContext): Promise<{ outcome: StepOutcome; detail: string }>;
}

export interface ExecuteOptions {
  runner: StepRunner;
  journal: Journal;
  /** config.repair.maxSubjects. */
  maxSubjects: number;
  /** Where the run's step events go (the thread, the audit trail, the log subscribe there). */
  events?: RepairEvents;
  now?: () => number;
  /** This run's lease: checked before every write and every progress post; the journal given must be fenced by it. */
  lease?: PlanLease;
  /** Where the fenced adapters the runner was built with find the current step's write guard. */
  route?: WriteRoute;
}

/** A step that undoes the state change of an earlier one, so it runs even after a failure (commission, or mark_fixed in older plans, takes a machine out of Broken). */
const RESTORES: Record<string, string> = { commission: 'mark-broken', 'mark-fixed': 'mark-broken' };

/**
 * Runs an approved plan one subject at a time, each step journaled, and stops at the first step
 * that is not verified. A step the journal shows done is not run again; one it shows started is
 * run with `resumed` so that its runner checks what the earlier call did. After a failure, a
 * subject's restoring step (commission after our mark_broken) still runs: we never leave a machine Broken.
 * Returns one result per step; the plan's refusals are the caller's to add.
 */
export async function executePlan(plan: RepairPlan, options: ExecuteOptions): Promise<StepResult[]> {
  const now = options.now ?? Date.now;
  const { events } = options;
  const subjects = subjectCount(plan.steps);
  if (subjects > options.maxSubjects) {
    const detail = `refused: this plan touches ${subjects} subjects, over the bound of ${options.maxSubjects} (repair.maxSubjects)`;
    return plan.steps.map((s) => result(s, 'refused', detail));
  }
  const results: StepResult[] = [];
  let stoppedAt: StepResult | undefined;
  for (const group of stepsBySubject(plan.steps)) {
    const subjectResults: StepResult[] = [];
    const touched = new Set<string>();
    for (const { index, step } of group.steps) {
      const restoring = RESTORES[step.action];
      if (stoppedAt && !(restoring && touched.has(restoring))) {
        const skipped = result(step, 'skipped', `not run: the plan stopped at ${stoppedAt.subject} (${stoppedAt.action})`);
        subjectResults.push(skipped);
        await events?.emit({ type: 'step-ended', index, result: skipped, replayed: false });
        continue;
      }
      const entry = await options.journal.get(index);
      if (entry?.state === 'done') {
        subjectResults.push(entry.result);
        await events?.emit({ type: 'step-ended', index, result: entry.result, replayed: true });
        // A mark_broken that ended "failed" (a timeout, say) may still have taken effect: its restore must run.
        if (entry.result.outcome === 'verified' || entry.result.outcome === 'failed') touched.add(step.action);
        if (entry.result.outcome !== 'verified') stoppedAt ??= entry.result;
        continue;
      }
      const writer = stepWriter({ journal: options.journal, index, entry: entry?.state === 'started' ? entry : undefined, token: options.lease?.token ?? 0, at: now });
      await options.journal.set(index, writer.entry());
      touched.add(step.action);
      await events?.emit({ type: 'step-started', index, step, resumed: writer.resumed });
      if (options.route) options.route.current = writer.write;
      let outcome: { outcome: StepOutcome; detail: string };
      try {
        outcome = await runStep(options.runner, step, { planId: plan.id, resumed: writer.resumed, write: writer.write });
      } finally {
        if (options.route) options.route.current = undefined;
      }
      // A runner turns a failed write into an outcome; a lost lease must stop the run all the same.
      if (options.lease?.lost) throw new LeaseLostError(plan.id, 'lost during the step');
      const stepResult = result(step, outcome.outcome, outcome.detail);
      await options.journal.set(index, { state: 'done', at: now(), result: stepResult, writes: writer.entry().writes ?? [] });
      subjectResults.push(stepResult);
      await events?.emit({ type: 'step-ended', index, result: stepResult, replayed: false });
      if (outcome.outcome !== 'verified') {
        stoppedAt ??= stepResult;
        if (outcome.outcome === 'refused' && !entry) touched.delete(step.action);
      }
    }
    results.push(...subjectResults);
    await options.lease?.check();
    await events?.emit({ type: 'subject-done', subject: group.subject, results: subjectResults });
  }
  return results;
}

async function runStep(runner: StepRunner, step: PlanStep, context: StepContext): Promise<{ outcome: StepOutcome; detail: string }> {
  try {
    return await runner.run(step, context);
  } catch (err) {
    if (isLeaseError(err)) throw err;
    return { outcome: 'failed', detail: describeError(err) };
  }
}

function result(step: PlanStep, outcome: StepOutcome, detail: string): StepResult {
  return { subject: step.subject, action: step.action, outcome, detail };
}
