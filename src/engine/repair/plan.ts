import { createHash } from 'node:crypto';
import { finishReport, type Finding, type Report, type StepResult } from '../../core/report.ts';
import type { PlanStep } from './plan-step.ts';

export type RepairKind = 'fix-macs' | 'fix-dns' | 'fix-resolver';

/** What a planner computes from a fresh check: the steps, and the subjects it will not touch. */
export interface RepairPlan {
  /** Derived from kind, target and steps: the same world gives the same id. */
  id: string;
  kind: RepairKind;
  target: string;
  /** Grouped by subject, in execution order. Params carry names, ids, MACs and IPs only. */
  steps: PlanStep[];
  /** Subjects left alone and why; reported as `refused` when the plan runs. */
  refusals: StepResult[];
  /** The check's findings the plan was computed from. */
  findings: Finding[];
  verdict: string;
  /** Subjects beyond repair.maxSubjects: not refused, left for the next plans (batches). */
  deferred?: string[];
  /** Which batch this plan is (1 for the first) when the repair goes in batches. */
  batch?: number;
}

export type RepairPlanDraft = Omit<RepairPlan, 'id'>;

/** Plan id: sha256 over kind, target and each step's subject, action and params (not the wording). */
export function planId(kind: RepairKind, target: string, steps: readonly PlanStep[]): string {
  const canonical = JSON.stringify([kind, target, steps.map((s) => [s.subject, s.action, sortKeys(s.params)])]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

export function withId(draft: RepairPlanDraft): RepairPlan {
  return { id: planId(draft.kind, draft.target, draft.steps), ...draft };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

/** Steps grouped by subject, keeping their plan indexes (the journal's keys). */
export function stepsBySubject(steps: readonly PlanStep[]): { subject: string; steps: { index: number; step: PlanStep }[] }[] {
  const groups: { subject: string; steps: { index: number; step: PlanStep }[] }[] = [];
  steps.forEach((step, index) => {
    const last = groups[groups.length - 1];
    if (last && last.subject === step.subject) last.steps.push({ index, step });
    else groups.push({ subject: step.subject, steps: [{ index, step }] });
  });
  return groups;
}

export function subjectCount(steps: readonly PlanStep[]): number {
  return new Set(steps.map((s) => s.subject)).size;
}

/** The plan as a Report (no results yet): docs/configuration.md, Report. */
export function planReport(plan: RepairPlan, startedAt: Date, results?: StepResult[], verdict?: string): Report {
  return finishReport(
    {
      kind: plan.kind,
      target: plan.target,
      verdict: verdict ?? plan.verdict,
      findings: results ? plan.findings : [...plan.findings, ...plan.refusals.map(refusalFinding)],
      plan: { id: plan.id, steps: plan.steps },
      ...(results ? { results } : {}),
    },
    startedAt,
  );
}

/** A subject the plan leaves alone: a guard refused it (exit status 2). */
function refusalFinding(refusal: StepResult): Finding {
  return {
    code: 'REPAIR_REFUSED',
    severity: 'error',
    subject: refusal.subject,
    summary: `${refusal.subject} is left alone: ${refusal.detail}`,
    evidence: { action: refusal.action, reason: refusal.detail },
  };
}

/** One line for the verdict after a run: what was verified, what was not. */
export function resultsVerdict(plan: RepairPlan, stepResults: readonly StepResult[]): string {
  const count = (o: StepResult['outcome']) => stepResults.filter((r) => r.outcome === o).length;
  const stopped = stepResults.find((r) => r.outcome === 'failed' || r.outcome === 'refused');
  const parts = [`${count('verified')} of ${plan.steps.length} steps verified`];
  if (count('failed')) parts.push(`${count('failed')} failed`);
  if (count('refused')) parts.push(`${count('refused')} refused`);
  if (count('skipped')) parts.push(`${count('skipped')} not run`);
  if (plan.refusals.length) parts.push(`${plan.refusals.length} left alone`);
  if (stopped) return `${plan.kind} ${plan.target} STOPPED at ${stopped.subject} (${stopped.action}): ${parts.join(', ')}`;
  return `${plan.kind} ${plan.target} done: ${parts.join(', ')}`;
}

/** Did every step go through? (Subjects the plan left alone do not count against it.) */
export function allStepsWent(stepResults: readonly StepResult[]): boolean {
  return !stepResults.some((r) => r.outcome === 'failed' || r.outcome === 'refused');
}
