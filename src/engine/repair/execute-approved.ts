import { ChatopsError, describeError } from '../../core/errors.ts';
import type { JobContext } from '../job-types.ts';
import type { Report } from '../../core/report.ts';
import { resolveTargets } from '../../core/targets.ts';
import { executePlan } from './executor.ts';
import type { ExecuteJobData } from './execute-job-data.ts';
import { fencedAdapters } from './fenced-adapters.ts';
import { advance, executeStep, stateOf, storedPhase, type RepairState } from './lifecycle.ts';
import { storeAndPost } from './plan-and-post.ts';
import { messageRef, notRun, refuseAll, worldChanged } from './plan-outcomes.ts';
import type { PlanLease } from './plan-lease.ts';
import type { StoredPlan } from './plan-store.ts';
import { planView } from './plan-view.ts';
import { allStepsWent, planReport, resultsVerdict, type RepairKind, type RepairPlan } from './plan.ts';
import { RepairEvents } from './repair-events.ts';
import { REPAIR_LOCK, type RepairSpec } from './repair-spec.ts';
import { auditSubscriber, metricsSubscriber, threadSubscriber } from './repair-subscribers.ts';
import { slackServices, type SlackServices } from './slack-services.ts';
import { plural, subjectsPhrase } from './subjects-phrase.ts';
import type { Journal } from './journal.ts';
import type { WriteRoute } from './write-guard.ts';
import { mention } from '../../core/mention.ts';

/** One execute run, once it holds the plan: the plan as read under the lease, and where it speaks. */
interface Run {
  ctx: JobContext;
  services: SlackServices;
  stored: StoredPlan;
  spec: RepairSpec;
  lease: PlanLease;
  journal: Journal;
  events: RepairEvents;
  /** A line in the plan's thread, fenced by the lease. */
  thread(text: string): Promise<void>;
  startedAt: Date;
}

/**
 * The execute job's driver, queued on approval: take the plan's lease, read the plan once, and
 * follow the lifecycle: re-measure, then execute with the Redis journal (or resume from it), or
 * refuse. Every journal write, external write and Slack post of the run is fenced by the lease.
 */
export async function executeApproved(ctx: JobContext, data: ExecuteJobData, specs: ReadonlyMap<RepairKind, RepairSpec>): Promise<Report> {
  const services = slackServices(ctx, 'repair-execute');
  const startedAt = new Date();
  // One run at a time: an earlier run's lease must lapse (or be given up) before this one acts.
  const lease = await services.plans.lease(data.planId, { ttlMs: ctx.job?.lockDurationMs ?? REPAIR_LOCK.lockDurationMs, ...(ctx.job?.lock ? { jobLock: ctx.job.lock } : {}) });
  try {
    // Read under the lease, once: the run this one waited for may have finished the plan.
    const stored = await services.plans.get(data.planId);
    if (!stored) throw new ChatopsError('GUARD_REFUSED', `plan ${data.planId} is no longer stored, so it was not run`, { hint: 'Run the /maas fix command again for a fresh plan' });
    const { plan } = stored;
    const spec = specs.get(plan.kind);
    if (!spec) throw new ChatopsError('GUARD_REFUSED', `plan ${plan.id} is a ${plan.kind} plan, which this worker does not run`);
    resolveTargets(ctx.config, spec.targetKind, plan.target);
    const journal = services.plans.journal(plan.id, lease);
    const state = stateOf(stored, await journal.hasBegun(), data.approvedBy);
    const step = executeStep(state, stored.results !== undefined);
    if (step === 'report-run' && stored.results) {
      // A retry after the run finished (its summary could not be posted): report the run, do not repeat it.
      return planReport(plan, startedAt, stored.results, resultsVerdict(plan, stored.results.slice(0, plan.steps.length)));
    }
    if (step === 'refuse') return notRun(plan, startedAt, `not run: the plan is ${stored.state}, not approved`);
    const ref = messageRef(stored);
    const thread = async (text: string) => {
      await lease.check();
      if (ref) await services.notifier.postInThread(ref, text);
    };
    const events = new RepairEvents();
    threadSubscriber(events, thread);
    auditSubscriber(events, ctx, plan, stored.decidedBy ?? data.approvedBy);
    metricsSubscriber(events, ctx, plan);
    return await execute({ ctx, services, stored, spec, lease, journal, events, thread, startedAt }, state);
  } finally {
    await lease.release().catch(() => undefined);
  }
}

async function execute(run: Run, approved: RepairState): Promise<Report> {
  const { ctx, stored, spec, startedAt } = run;
  const { plan } = stored;
  let state = approved;
  if (state.phase === 'approved') {
    const approvedBy = state.by;
    let fresh: RepairPlan;
    try {
      fresh = await spec.plan(ctx, plan.target);
    } catch (err) {
      await run.lease.check();
      return unmeasurable(run, err);
    }
    await run.lease.check();
    state = advance(state, { type: 're-measure', freshPlanId: fresh.id });
    if (state.phase === 'superseded') return supersede(run, fresh);
    if (!(await run.services.plans.startExecution(plan.id))) {
      return notRun(plan, startedAt, 'not run: the plan is no longer approved (its approval was taken back, or another worker started it)');
    }
    state = advance(state, { type: 'start' });
    await run.journal.begin();
    const on = subjectsPhrase(plan.kind, plan.steps.map((s) => s.subject));
    await run.thread(`Re-measured: the world matches the plan. Running ${plural(plan.steps.length, 'step')} on ${on}, one at a time (approved by ${mention(approvedBy)}).`);
  } else {
    // Only a run holding the lease gets here, and only after the run before it stopped or lapsed.
    state = advance(state, { type: 'resume' });
    await run.thread('Resuming after a restart: steps the journal shows done are not repeated, and a write whose outcome was not recorded is checked in the world, not sent again.');
  }
  const route: WriteRoute = {};
  const stepResults = await executePlan(plan, {
    runner: spec.runner({ ...ctx, adapters: fencedAdapters(ctx.adapters, route) }, plan.target, (text) => run.events.emit({ type: 'progress', text })),
    route,
    journal: run.journal,
    lease: run.lease,
    maxSubjects: ctx.config.repair.maxSubjects,
    events: run.events,
  });
  state = advance(state, { type: 'finish', allStepsWent: allStepsWent(stepResults) });
  const ended = storedPhase(state);
  const results = [...stepResults, ...plan.refusals];
  const report = planReport(plan, startedAt, results, resultsVerdict(plan, stepResults));
  await run.lease.check();
  await run.services.plans.setState(plan.id, ended, results);
  await run.events.emit({ type: 'run-ended', outcome: ended === 'done' ? 'applied' : 'failed', steps: stepResults });
  const note = await recheckAfterRun(ctx, spec, plan.target);
  const ref = messageRef(stored);
  if (ref) await run.services.notifier.updatePlan(ref, planView({ ...stored, state: ended }, { approvers: ctx.config.slack.approvers, report, state: ended, note }));
  ctx.log.info({ plan: plan.id, state: ended, outcomes: results.map((r) => r.outcome), token: run.lease.token }, 'repair plan finished');
  return report;
}

/** The check run again after the last step, as the plan message shows it: "Re-checked: nothing to repair at site-b: 12 of 12 machines match…". */
async function recheckAfterRun(ctx: JobContext, spec: RepairSpec, target: string): Promise<string> {
  try {
    const after = await spec.plan(ctx, target);
    return after.steps.length ? `Re-checked after the run: ${after.verdict}.` : `Re-checked after the run: ${after.verdict.replace(/^Nothing to repair at [^:]+: /, '')}.`;
  } catch (err) {
    return `The re-check after the run could not be done (${describeError(err)}); run the check again.`;
  }
}

/** The world changed between plan and approval: refuse, and post the plan computed now for a new approval. */
async function supersede(run: Run, fresh: RepairPlan): Promise<Report> {
  const { ctx, stored, services, startedAt } = run;
  const { plan } = stored;
  const ref = messageRef(stored);
  const next = fresh.steps.length ? 'a new plan is posted for a new approval' : `nothing is left to repair (${fresh.verdict})`;
  const report = worldChanged(plan, fresh, startedAt, `since it was approved; ${next}`);
  await services.plans.setState(plan.id, 'superseded', report.results);
  await run.events.emit({ type: 'run-ended', outcome: 'refused', steps: [] });
  if (ref) {
    await services.notifier.updatePlan(ref, planView(stored, { approvers: ctx.config.slack.approvers, state: 'superseded', note: `Refused: the world changed; ${next}.` }));
    await services.notifier.postInThread(ref, `Not run: re-measured right before running, the plan is no longer the one approved (now ${fresh.id}: ${fresh.verdict}). Nothing was changed; ${next}.`);
  }
  if (fresh.steps.length) await storeAndPost(ctx, services, fresh, planReport(fresh, startedAt), stored.requester, stored.channel);
  ctx.log.warn({ plan: plan.id, fresh: fresh.id }, 'approved plan superseded: the world changed');
  return report;
}

/**
 * The re-measure before the first step failed (MAAS or a host unreachable): nothing ran. The plan is
 * closed as failed rather than left approved, so `/maas fix-…` can plan again once the world answers.
 */
async function unmeasurable(run: Run, err: unknown): Promise<Report> {
  const { ctx, stored, services, startedAt } = run;
  const { plan } = stored;
  const detail = `not run: the world could not be measured again before the first step (${describeError(err)}); nothing was changed`;
  const results = refuseAll(plan, detail);
  const report = planReport(plan, startedAt, results, `${plan.kind} ${plan.target}: ${detail}. Run /maas ${plan.kind} ${plan.target} again once it answers`);
  await services.plans.setState(plan.id, 'failed', results);
  await run.events.emit({ type: 'run-ended', outcome: 'failed', steps: [] });
  const ref = messageRef(stored);
  if (ref) {
    await services.notifier.postInThread(ref, report.verdict).catch(() => undefined);
    await services.notifier.updatePlan(ref, planView({ ...stored, state: 'failed' }, { approvers: ctx.config.slack.approvers, report, state: 'failed' })).catch(() => undefined);
  }
  ctx.log.warn({ plan: plan.id, err: describeError(err) }, 'repair plan not run: re-measure failed');
  return report;
}
