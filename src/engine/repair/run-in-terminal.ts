import type { JobContext, JobData } from '../job-types.ts';
import type { Report } from '../../core/report.ts';
import { executePlan } from './executor.ts';
import { fencedAdapters } from './fenced-adapters.ts';
import { memoryJournal } from './journal.ts';
import { advance } from './lifecycle.ts';
import { planOrReport, worldChanged } from './plan-outcomes.ts';
import { allStepsWent, planReport, resultsVerdict } from './plan.ts';
import { RepairEvents } from './repair-events.ts';
import type { RepairSpec } from './repair-spec.ts';
import { logSubscriber } from './repair-subscribers.ts';
import type { WriteRoute } from './write-guard.ts';

/**
 * The CLI's driver (`maas-chatops fix-… <target> [--apply]`): plan, and with --apply (the terminal's
 * approval) re-measure and execute with an in-memory journal, progress in the log.
 */
export async function runInTerminal(ctx: JobContext, data: JobData, spec: RepairSpec): Promise<Report> {
  const startedAt = new Date();
  const planned = await planOrReport(ctx, data.target, spec, startedAt);
  if ('report' in planned) return planned.report;
  const { plan } = planned;
  if (data.apply !== true || plan.steps.length === 0) return planReport(plan, startedAt);
  const applier = typeof data.requestedBy === 'string' ? data.requestedBy : 'terminal';
  let state = advance({ phase: 'stored', planId: plan.id }, { type: 'approve', by: applier });
  const fresh = await spec.plan(ctx, data.target);
  state = advance(state, { type: 're-measure', freshPlanId: fresh.id });
  if (state.phase === 'superseded') return worldChanged(plan, fresh, startedAt, 'while it was being planned; run it again');
  state = advance(state, { type: 'start' });
  ctx.log.info({ plan: plan.id, applier, steps: plan.steps.length }, `${spec.kind}: applying`);
  const events = new RepairEvents();
  logSubscriber(events, ctx.log, plan);
  const route: WriteRoute = {};
  const stepResults = await executePlan(plan, {
    runner: spec.runner({ ...ctx, adapters: fencedAdapters(ctx.adapters, route) }, data.target, (text) => events.emit({ type: 'progress', text })),
    route,
    journal: memoryJournal(),
    maxSubjects: ctx.config.repair.maxSubjects,
    events,
  });
  advance(state, { type: 'finish', allStepsWent: allStepsWent(stepResults) });
  return planReport(plan, startedAt, [...stepResults, ...plan.refusals], `${resultsVerdict(plan, stepResults)} (applied by ${applier})`);
}
