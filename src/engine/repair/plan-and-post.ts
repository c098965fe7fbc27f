import { approvalsRequired } from '../../core/config.ts';
import { ChatopsError, describeError } from '../../core/errors.ts';
import type { JobContext, JobData } from '../job-types.ts';
import type { ReplyTarget } from '../notifier.ts';
import type { Report } from '../../core/report.ts';
import { batchOf, messageRef, planOrReport } from './plan-outcomes.ts';
import { planReport, type RepairPlan } from './plan.ts';
import type { StoredPlan } from './plan-store.ts';
import { planView } from './plan-view.ts';
import type { RepairSpec } from './repair-spec.ts';
import { slackServices, type SlackServices } from './slack-services.ts';
import { mention } from '../../core/mention.ts';

/** The plan job's driver (Slack): plan, store it, post it with Approve / Reject. */
export async function planAndPost(ctx: JobContext, data: JobData, spec: RepairSpec): Promise<Report> {
  const origin = data.origin as ReplyTarget | undefined;
  if (!origin?.channel) throw new ChatopsError('USAGE', `${spec.kind} was queued without the channel to post its plan to`);
  let services: SlackServices;
  try {
    services = slackServices(ctx, spec.kind);
  } catch (err) {
    // No reply target in this phase: say it here, or nobody hears of it.
    await ctx.notifier?.postError(origin, `${spec.kind} ${data.target}: ${describeError(err)}`);
    throw err;
  }
  const requester = typeof data.requestedBy === 'string' ? data.requestedBy : (origin.user ?? '');
  const startedAt = new Date();
  const planned = await planOrReport(ctx, data.target, spec, startedAt, batchOf(data));
  if ('report' in planned) {
    await services.notifier.postReports(origin, [planned.report]);
    return planned.report;
  }
  const report = planReport(planned.plan, startedAt);
  if (planned.plan.steps.length === 0) {
    await services.notifier.postReports(origin, [report]);
    return report;
  }
  await storeAndPost(ctx, services, planned.plan, report, requester, origin.channel);
  return report;
}

/** Stores the plan as pending and posts it for approval; a plan already pending or running is pointed at instead. */
export async function storeAndPost(ctx: JobContext, services: SlackServices, plan: RepairPlan, report: Report, requester: string, channel: string): Promise<void> {
  const { plans, notifier } = services;
  const now = Date.now();
  const ttlMs = ctx.config.slack.approvalTtlMs;
  const required = approvalsRequired(ctx.config.slack, plan.kind);
  const stored = await plans.create({ plan, report, requester, channel, now, ttlMs, required });
  if (!stored.created) {
    const ref = messageRef(stored.existing);
    const note = `${mention(requester)} asked for this plan again; it is still ${stored.existing.state} here (plan ${plan.id}).`;
    if (ref) await notifier.postInThread(ref, note);
    else await notifier.postReports({ channel }, [report]);
    return;
  }
  // As the store now holds it: no need to read it back.
  const pending: StoredPlan = { plan, report, requester, channel, createdAt: now, expiresAt: now + ttlMs, state: 'pending', ...(required > 1 ? { required } : {}) };
  const ref = await notifier.postPlan({ channel }, planView(pending, { approvers: ctx.config.slack.approvers }));
  await plans.setMessage(plan.id, ref.ts);
  await ctx.audit?.record({ kind: 'plan', actor: requester, channel, action: plan.kind, target: plan.target, outcome: 'posted', detail: `${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'}: ${report.verdict}`, planId: plan.id });
  ctx.log.info({ plan: plan.id, kind: plan.kind, target: plan.target, steps: plan.steps.length, requester }, 'repair plan posted for approval');
}
