import { ChatopsError, describeError, UsageError } from '../src/errors.ts';
import type { MessageRef, Notifier, ReplyTarget } from '../src/notifier.ts';
import { executePlan, type StepRunner } from '../src/repair/executor.ts';
import { fencedAdapters } from '../src/repair/fenced-adapters.ts';
import { memoryJournal } from '../src/repair/journal.ts';
import type { PlanLease } from '../src/repair/plan-lease.ts';
import type { WriteRoute } from '../src/repair/write-guard.ts';
import { allStepsWent, planReport, resultsVerdict, subjectCount, type RepairKind, type RepairPlan } from '../src/repair/plan.ts';
import type { PlanStore, StoredPlan } from '../src/repair/plan-store.ts';
import { planView } from '../src/repair/plan-view.ts';
import { finishReport, probeFailed, type Report, type StepResult } from '../src/report.ts';
import { resolveTargets, type TargetKind } from '../src/targets.ts';
import type { RepairOutcome } from '../src/metrics.ts';
import type { JobContext, JobData, LockTuning } from '../src/job-types.ts';

/**
 * BullMQ's lock for the repair kinds (docs/operations.md, "Repair runs and BullMQ's lock"): a minute
 * rides out a Redis failover or restart without a takeover; a worker that died is replaced within
 * about 75 s (lock + one stalled check); a repair that stalls is resumed, fenced, up to five times
 * rather than failed with machines left Broken.
 */
export const REPAIR_LOCK: LockTuning = { lockDurationMs: 60_000, stalledIntervalMs: 15_000, maxStalledCount: 5 };

/** One repair (fix-macs, fix-dns): how to plan it from a fresh check and how to carry out its steps. */
export interface RepairDefinition {
  kind: RepairKind;
  targetKind: TargetKind;
  /** Gathers a fresh snapshot and computes the plan. */
  plan(ctx: JobContext, target: string): Promise<RepairPlan>;
  /** `progress`: a line for the plan's thread (or the log) while a step waits on something slow. */
  runner(ctx: JobContext, target: string, progress?: (text: string) => Promise<void>): StepRunner;
}

/** Job data of the execute phase, queued by the approval handler. */
export interface ExecuteJobData extends JobData {
  phase: 'execute';
  planId: string;
  approvedBy: string;
  /** When it was approved: with the plan id, the run's BullMQ job id (see executionJobId). */
  approvedAt?: number;
}

/**
 * The three ways a repair job runs:
 * - CLI (`interactive`): plan, and with `apply` re-measure and execute with an in-memory journal;
 * - Slack, plan phase (`origin` set): plan, store it, post it with Approve / Reject;
 * - Slack, execute phase (`phase: 'execute'`, queued on approval): re-measure, execute with the Redis journal.
 */
export async function runRepairJob(ctx: JobContext, data: JobData, def: RepairDefinition): Promise<Report[]> {
  if (data.target === 'all') {
    throw new UsageError(`${def.kind} takes one ${def.targetKind}, not all`, `A repair is planned and approved per ${def.targetKind}: run ${def.kind} <${def.targetKind}>`);
  }
  resolveTargets(ctx.config, def.targetKind, data.target);
  if (data.interactive === true) return [await runInTerminal(ctx, data, def)];
  if (data.phase === 'execute') return [await executeApproved(ctx, data as ExecuteJobData, def)];
  return [await planAndPost(ctx, data, def)];
}

// ---------------------------------------------------------------- terminal

async function runInTerminal(ctx: JobContext, data: JobData, def: RepairDefinition): Promise<Report> {
  const startedAt = new Date();
  const planned = await planOrReport(ctx, data.target, def, startedAt);
  if ('report' in planned) return planned.report;
  const { plan } = planned;
  if (data.apply !== true || plan.steps.length === 0) return planReport(plan, startedAt);
  const fresh = await def.plan(ctx, data.target);
  if (fresh.id !== plan.id) return worldChanged(plan, fresh, startedAt, 'while it was being planned; run it again');
  const applier = typeof data.requestedBy === 'string' ? data.requestedBy : 'terminal';
  ctx.log.info({ plan: plan.id, applier, steps: plan.steps.length }, `${def.kind}: applying`);
  const route: WriteRoute = {};
  const stepResults = await executePlan(plan, {
    runner: def.runner({ ...ctx, adapters: fencedAdapters(ctx.adapters, route) }, data.target, async (text) => ctx.log.info({ plan: plan.id }, text)),
    route,
    journal: memoryJournal(),
    maxSubjects: ctx.config.repair.maxSubjects,
    onSubject: async (subject, rs) => ctx.log.info({ plan: plan.id, subject, outcomes: rs.map((r) => r.outcome) }, progressLine(subject, rs)),
  });
  return planReport(plan, startedAt, [...stepResults, ...plan.refusals], `${resultsVerdict(plan, stepResults)} (applied by ${applier})`);
}

// ---------------------------------------------------------------- Slack: plan phase

async function planAndPost(ctx: JobContext, data: JobData, def: RepairDefinition): Promise<Report> {
  const origin = data.origin as ReplyTarget | undefined;
  if (!origin?.channel) throw new ChatopsError('USAGE', `${def.kind} was queued without the channel to post its plan to`);
  let services: ReturnType<typeof slackServices>;
  try {
    services = slackServices(ctx, def);
  } catch (err) {
    // No reply target in this phase: say it here, or nobody hears of it.
    await ctx.notifier?.postError(origin, `${def.kind} ${data.target}: ${describeError(err)}`);
    throw err;
  }
  const { plans, notifier } = services;
  const requester = typeof data.requestedBy === 'string' ? data.requestedBy : (origin.user ?? '');
  const startedAt = new Date();
  const planned = await planOrReport(ctx, data.target, def, startedAt);
  if ('report' in planned) {
    await notifier.postReports(origin, [planned.report]);
    return planned.report;
  }
  const report = planReport(planned.plan, startedAt);
  if (planned.plan.steps.length === 0) {
    await notifier.postReports(origin, [report]);
    return report;
  }
  await storeAndPost(ctx, { plans, notifier }, planned.plan, report, requester, origin.channel);
  return report;
}

async function storeAndPost(
  ctx: JobContext,
  services: { plans: PlanStore; notifier: SlackNotifier },
  plan: RepairPlan,
  report: Report,
  requester: string,
  channel: string,
): Promise<void> {
  const { plans, notifier } = services;
  const stored = await plans.create({ plan, report, requester, channel, now: Date.now(), ttlMs: ctx.config.slack.approvalTtlMs });
  if (!stored.created) {
    const ref = messageRef(stored.existing);
    const note = `<@${requester}> asked for this plan again; it is still ${stored.existing.state} here (plan ${plan.id}).`;
    if (ref) await notifier.postInThread(ref, note);
    else await notifier.postReports({ channel }, [report]);
    return;
  }
  const saved = await plans.get(plan.id);
  if (!saved) throw new Error(`plan ${plan.id} vanished after it was stored`);
  const ref = await notifier.postPlan({ channel }, planView(saved, { approvers: ctx.config.slack.approvers }));
  await plans.setMessage(plan.id, ref.ts);
  ctx.log.info({ plan: plan.id, kind: plan.kind, target: plan.target, steps: plan.steps.length, requester }, 'repair plan posted for approval');
}

// ---------------------------------------------------------------- Slack: execute phase

async function executeApproved(ctx: JobContext, data: ExecuteJobData, def: RepairDefinition): Promise<Report> {
  const { plans } = slackServices(ctx, def);
  const startedAt = new Date();
  const first = await approvedPlan(plans, data, def, startedAt);
  if ('report' in first) return first.report;
  // One run at a time: an earlier run's lease must lapse (or be given up) before this one acts.
  const lease = await plans.lease(data.planId, { ttlMs: ctx.job?.lockDurationMs ?? REPAIR_LOCK.lockDurationMs, ...(ctx.job?.lock ? { jobLock: ctx.job.lock } : {}) });
  try {
    // Read again under the lease: the run this one waited for may have finished the plan.
    const current = await approvedPlan(plans, data, def, startedAt);
    if ('report' in current) return current.report;
    return await executeLeased(ctx, data, def, current.stored, lease, startedAt);
  } finally {
    await lease.release().catch(() => undefined);
  }
}

/** The stored plan, if it is this job's and still to be run; else the report that says why not (or what it did). */
async function approvedPlan(plans: PlanStore, data: ExecuteJobData, def: RepairDefinition, startedAt: Date): Promise<{ stored: StoredPlan } | { report: Report }> {
  const stored = await plans.get(data.planId);
  if (!stored) {
    throw new ChatopsError('GUARD_REFUSED', `plan ${data.planId} is no longer stored, so it was not run`, { hint: `Run /maas ${def.kind} ${data.target} again` });
  }
  const plan = stored.plan;
  if (plan.kind !== def.kind || plan.target !== data.target) {
    throw new ChatopsError('GUARD_REFUSED', `plan ${plan.id} is a ${plan.kind} plan for ${plan.target}, not ${def.kind} ${data.target}`);
  }
  if ((stored.state === 'done' || stored.state === 'failed') && stored.results) {
    // A retry after the run finished (its summary could not be posted): report the run, do not repeat it.
    const stepResults = stored.results.slice(0, plan.steps.length);
    return { report: planReport(plan, startedAt, stored.results, resultsVerdict(plan, stepResults)) };
  }
  if (stored.state !== 'approved' && stored.state !== 'executing') {
    const detail = `not run: the plan is ${stored.state}, not approved`;
    return { report: planReport(plan, startedAt, refuseAll(plan, detail), `${def.kind} ${plan.target}: ${detail}`) };
  }
  return { stored };
}

/** The run proper, under this run's lease: every journal write, external write and Slack post is fenced by it. */
async function executeLeased(ctx: JobContext, data: ExecuteJobData, def: RepairDefinition, stored: StoredPlan, lease: PlanLease, startedAt: Date): Promise<Report> {
  const { plans, notifier } = slackServices(ctx, def);
  const plan = stored.plan;
  const ref = messageRef(stored);
  const thread = async (text: string) => {
    await lease.check();
    if (ref) await notifier.postInThread(ref, text);
  };
  const journal = plans.journal(plan.id, lease);
  if (!(await journal.hasBegun())) {
    let fresh: RepairPlan;
    try {
      fresh = await def.plan(ctx, data.target);
    } catch (err) {
      await lease.check();
      return unmeasurable(ctx, { plans, notifier }, stored, startedAt, err);
    }
    await lease.check();
    if (fresh.id !== plan.id) return supersede(ctx, { plans, notifier }, stored, fresh, startedAt);
    if (!(await plans.startExecution(plan.id))) {
      const detail = 'not run: the plan is no longer approved (its approval was taken back, or another worker started it)';
      return planReport(plan, startedAt, refuseAll(plan, detail), `${def.kind} ${plan.target}: ${detail}`);
    }
    await journal.begin();
    await thread(`Re-measured: the world matches the plan. Running ${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'} on ${subjectCount(plan.steps)} subject${subjectCount(plan.steps) === 1 ? '' : 's'}, one at a time (approved by <@${stored.decidedBy ?? data.approvedBy}>).`);
  } else {
    // Only a run holding the lease gets here, and only after the run before it stopped or lapsed.
    await thread('Resuming after a restart: steps the journal shows done are not repeated, and a write whose outcome was not recorded is checked in the world, not sent again.');
  }
  const route: WriteRoute = {};
  const stepResults = await executePlan(plan, {
    runner: def.runner({ ...ctx, adapters: fencedAdapters(ctx.adapters, route) }, data.target, thread),
    route,
    journal,
    lease,
    maxSubjects: ctx.config.repair.maxSubjects,
    onSubject: async (subject, rs) => {
      await thread(progressLine(subject, rs));
      await auditSteps(ctx, plan, stored.decidedBy ?? String(data.approvedBy ?? ''), subject, rs);
    },
  });
  const results = [...stepResults, ...plan.refusals];
  const state = allStepsWent(stepResults) ? 'done' : 'failed';
  const report = planReport(plan, startedAt, results, resultsVerdict(plan, stepResults));
  await lease.check();
  await plans.setState(plan.id, state, results);
  countRepair(ctx, plan.kind, state === 'done' ? 'applied' : 'failed', stepResults);
  const note = await recheckAfterRun(ctx, def, data.target);
  if (ref) await notifier.updatePlan(ref, planView({ ...stored, state }, { approvers: ctx.config.slack.approvers, report, state, note }));
  ctx.log.info({ plan: plan.id, state, outcomes: results.map((r) => r.outcome), token: lease.token }, 'repair plan finished');
  return report;
}

/** The check run again after the last step, as the plan message shows it: "Re-checked: nothing to repair at site-b: 12 of 12 machines match…". */
async function recheckAfterRun(ctx: JobContext, def: RepairDefinition, target: string): Promise<string> {
  try {
    const after = await def.plan(ctx, target);
    return after.steps.length ? `Re-checked after the run: ${after.verdict}.` : `Re-checked after the run: ${after.verdict.replace(/^Nothing to repair at [^:]+: /, '')}.`;
  } catch (err) {
    return `The re-check after the run could not be done (${describeError(err)}); run the check again.`;
  }
}

/** The world changed between plan and approval: refuse, and post the plan computed now for a new approval. */
async function supersede(
  ctx: JobContext,
  services: { plans: PlanStore; notifier: SlackNotifier },
  stored: StoredPlan,
  fresh: RepairPlan,
  startedAt: Date,
): Promise<Report> {
  const { plans, notifier } = services;
  const plan = stored.plan;
  const ref = messageRef(stored);
  const next = fresh.steps.length ? 'a new plan is posted for a new approval' : `nothing is left to repair (${fresh.verdict})`;
  const report = worldChanged(plan, fresh, startedAt, `since it was approved; ${next}`);
  await plans.setState(plan.id, 'superseded', report.results);
  countRepair(ctx, plan.kind, 'refused', []);
  if (ref) {
    await notifier.updatePlan(ref, planView(stored, { approvers: ctx.config.slack.approvers, state: 'superseded', note: `Refused: the world changed; ${next}.` }));
    await notifier.postInThread(ref, `Not run: re-measured right before running, the plan is no longer the one approved (now ${fresh.id}: ${fresh.verdict}). Nothing was changed; ${next}.`);
  }
  if (fresh.steps.length) await storeAndPost(ctx, services, fresh, planReport(fresh, startedAt), stored.requester, stored.channel);
  ctx.log.warn({ plan: plan.id, fresh: fresh.id }, 'approved plan superseded: the world changed');
  return report;
}

function worldChanged(plan: RepairPlan, fresh: RepairPlan, startedAt: Date, when: string): Report {
  const detail = `refused: the world changed ${when}`;
  return planReport(plan, startedAt, refuseAll(plan, detail), `${plan.kind} ${plan.target} REFUSED: the world changed ${when} (now: ${fresh.verdict})`);
}

// ---------------------------------------------------------------- helpers

type SlackNotifier = Notifier & Required<Pick<Notifier, 'postPlan' | 'updatePlan' | 'postInThread'>>;

function slackServices(ctx: JobContext, def: RepairDefinition): { plans: PlanStore; notifier: SlackNotifier } {
  const { plans, notifier } = ctx;
  if (!plans || !notifier?.postPlan || !notifier.updatePlan || !notifier.postInThread) {
    throw new ChatopsError('CONFIG_INVALID', `${def.kind} from Slack needs the plan store and a notifier that posts plans in the worker's context`, {
      hint: 'Whoever runs the bot: give startJobWorkers a context with plans (createPlanStore) and the Slack notifier',
    });
  }
  return { plans, notifier: notifier as SlackNotifier };
}

async function planOrReport(ctx: JobContext, target: string, def: RepairDefinition, startedAt: Date): Promise<{ plan: RepairPlan } | { report: Report }> {
  try {
    return { plan: await def.plan(ctx, target) };
  } catch (err) {
    ctx.log.warn({ kind: def.kind, target, err: describeError(err) }, 'could not plan');
    return { report: finishReport({ kind: def.kind, target, verdict: `Could not plan ${def.kind} ${target}`, findings: [probeFailed(target, describeError(err))] }, startedAt) };
  }
}

/**
 * The re-measure before the first step failed (MAAS or a host unreachable): nothing ran. The plan is
 * closed as failed rather than left approved, so `/maas fix-…` can plan again once the world answers.
 */
async function unmeasurable(
  ctx: JobContext,
  services: { plans: PlanStore; notifier: SlackNotifier },
  stored: StoredPlan,
  startedAt: Date,
  err: unknown,
): Promise<Report> {
  const { plan } = stored;
  const detail = `not run: the world could not be measured again before the first step (${describeError(err)}); nothing was changed`;
  const results = refuseAll(plan, detail);
  const report = planReport(plan, startedAt, results, `${plan.kind} ${plan.target}: ${detail}. Run /maas ${plan.kind} ${plan.target} again once it answers`);
  await services.plans.setState(plan.id, 'failed', results);
  countRepair(ctx, plan.kind, 'failed', []);
  const ref = messageRef(stored);
  if (ref) {
    await services.notifier.postInThread(ref, report.verdict).catch(() => undefined);
    await services.notifier.updatePlan(ref, planView({ ...stored, state: 'failed' }, { approvers: ctx.config.slack.approvers, report, state: 'failed' })).catch(() => undefined);
  }
  ctx.log.warn({ plan: plan.id, err: describeError(err) }, 'repair plan not run: re-measure failed');
  return report;
}

function refuseAll(plan: RepairPlan, detail: string): StepResult[] {
  return [...plan.steps.map((s) => ({ subject: s.subject, action: s.action, outcome: 'refused' as const, detail })), ...plan.refusals];
}

function messageRef(stored: StoredPlan): MessageRef | undefined {
  return stored.messageTs ? { channel: stored.channel, ts: stored.messageTs } : undefined;
}

const ICON: Record<StepResult['outcome'], string> = { verified: '✅', skipped: '⏭️', refused: '⛔', failed: '❌' };

export function progressLine(subject: string, results: readonly StepResult[]): string {
  return `${subject}: ${results.map((r) => `${ICON[r.outcome]} ${r.action} ${r.outcome} (${r.detail})`).join(' → ')}`;
}

/** The repairs_total and repair_steps_total metrics: once per plan that ended, once per step it ran. */
function countRepair(ctx: JobContext, kind: RepairKind, outcome: RepairOutcome, steps: readonly StepResult[]): void {
  ctx.metrics?.recordRepair(kind, outcome);
  for (const step of steps) ctx.metrics?.recordRepairStep(kind, step.outcome);
}

/** Every repair step goes to the audit trail: who approved it, what it did to which subject, how it ended. */
async function auditSteps(ctx: JobContext, plan: RepairPlan, approvedBy: string, subject: string, results: readonly StepResult[]): Promise<void> {
  if (!ctx.audit) return;
  for (const r of results) {
    await ctx.audit.record({ kind: 'repair-step', actor: approvedBy, action: r.action, target: plan.target, subject, planId: plan.id, outcome: r.outcome, detail: r.detail });
  }
}
