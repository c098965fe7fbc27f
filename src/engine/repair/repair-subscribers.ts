import type { JobContext } from '../job-types.ts';
import type { Logger } from '../../core/log.ts';
import { progressLine } from './plan-outcomes.ts';
import type { RepairPlan } from './plan.ts';
import type { RepairEvents } from './repair-events.ts';

/** The plan's Slack thread: each slow step's progress, then one line per subject. */
export function threadSubscriber(events: RepairEvents, thread: (text: string) => Promise<void>): void {
  events.on('progress', (e) => thread(e.text));
  events.on('subject-done', (e) => thread(progressLine(e.subject, e.results)));
}

/** Every repair step goes to the audit trail: who approved it, what it did to which subject, how it ended. */
export function auditSubscriber(events: RepairEvents, ctx: Pick<JobContext, 'audit'>, plan: RepairPlan, approvedBy: string): void {
  events.on('subject-done', async ({ subject, results }) => {
    if (!ctx.audit) return;
    for (const r of results) {
      await ctx.audit.record({ kind: 'repair-step', actor: approvedBy, action: r.action, target: plan.target, subject, planId: plan.id, outcome: r.outcome, detail: r.detail });
    }
  });
  events.on('run-ended', async ({ outcome, steps }) => {
    const verified = steps.filter((s) => s.outcome === 'verified').length;
    await ctx.audit?.record({ kind: 'repair', actor: approvedBy, action: plan.kind, target: plan.target, planId: plan.id, outcome, detail: `${verified} of ${steps.length} steps verified` });
  });
}

/** The repairs_total and repair_steps_total metrics: once per plan that ended, once per step it ran. */
export function metricsSubscriber(events: RepairEvents, ctx: Pick<JobContext, 'metrics'>, plan: RepairPlan): void {
  events.on('run-ended', ({ outcome, steps }) => {
    ctx.metrics?.recordRepair(plan.kind, outcome);
    for (const step of steps) ctx.metrics?.recordRepairStep(plan.kind, step.outcome);
  });
}

/** From a terminal: the log says what the thread would. */
export function logSubscriber(events: RepairEvents, log: Logger, plan: RepairPlan): void {
  events.on('progress', (e) => log.info({ plan: plan.id }, e.text));
  events.on('subject-done', ({ subject, results }) => log.info({ plan: plan.id, subject, outcomes: results.map((r) => r.outcome) }, progressLine(subject, results)));
}
