import { describeError } from '../errors.ts';
import type { PlanStep, StepOutcome, StepResult } from '../report.ts';
import type { Journal } from './journal.ts';
import { stepsBySubject, subjectCount, type RepairPlan } from './plan.ts';

export interface StepContext {
  planId: string;
  /** The journal says this step was started before and never finished: check what it did before acting. */
  resumed: boolean;
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
  /** After each subject: for progress in the plan's thread. */
  onSubject?: (subject: string, results: StepResult[]) => Promise<void>;
  now?: () => number;
}

/** A step that undoes the state change of an earlier one, so it runs even after a failure. */
const RESTORES: Record<string, string> = { 'mark-fixed': 'mark-broken' };

/**
 * Runs an approved plan one subject at a time, each step journaled, and stops at the first step
 * that is not verified. A step the journal shows done is not run again; one it shows started is
 * run with `resumed` so that its runner checks what the earlier call did. After a failure, a
 * subject's restoring step (mark_fixed after our mark_broken) still runs: we never leave a machine Broken.
 * Returns one result per step; the plan's refusals are the caller's to add.
 */
export async function executePlan(plan: RepairPlan, options: ExecuteOptions): Promise<StepResult[]> {
  const now = options.now ?? Date.now;
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
        subjectResults.push(result(step, 'skipped', `not run: the plan stopped at ${stoppedAt.subject} (${stoppedAt.action})`));
        continue;
      }
      const entry = await options.journal.get(index);
      if (entry?.state === 'done') {
        subjectResults.push(entry.result);
        // A mark_broken that ended "failed" (a timeout, say) may still have taken effect: its restore must run.
        if (entry.result.outcome === 'verified' || entry.result.outcome === 'failed') touched.add(step.action);
        if (entry.result.outcome !== 'verified') stoppedAt ??= entry.result;
        continue;
      }
      await options.journal.set(index, { state: 'started', at: now() });
      touched.add(step.action);
      const outcome = await runStep(options.runner, step, { planId: plan.id, resumed: entry?.state === 'started' });
      const stepResult = result(step, outcome.outcome, outcome.detail);
      await options.journal.set(index, { state: 'done', at: now(), result: stepResult });
      subjectResults.push(stepResult);
      if (outcome.outcome !== 'verified') {
        stoppedAt ??= stepResult;
        if (outcome.outcome === 'refused' && !entry) touched.delete(step.action);
      }
    }
    results.push(...subjectResults);
    await options.onSubject?.(group.subject, subjectResults);
  }
  return results;
}

async function runStep(runner: StepRunner, step: PlanStep, context: StepContext): Promise<{ outcome: StepOutcome; detail: string }> {
  try {
    return await runner.run(step, context);
  } catch (err) {
    return { outcome: 'failed', detail: describeError(err) };
  }
}

function result(step: PlanStep, outcome: StepOutcome, detail: string): StepResult {
  return { subject: step.subject, action: step.action, outcome, detail };
}
