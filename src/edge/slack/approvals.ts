import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { AuditRecorder } from '../../engine/audit/audit-log.ts';
import type { Metrics } from '../../engine/metrics.ts';
import type { Config } from '../../core/config.ts';
import { ConfigError, describeError } from '../../core/errors.ts';
import { FIX_NAMES } from '../../features/registry.ts';
import type { Logger } from '../../core/log.ts';
import type { PlanState, PlanStore, StoredPlan } from '../../engine/repair/plan-store.ts';
import { executionJobId, REPAIR_EXECUTE_JOB, type ExecuteJobData, type QueueExecution } from '../../engine/repair/execute-job-data.ts';
import { planView } from '../../engine/repair/plan-view.ts';
import type { SlackGateway } from './gateway.ts';
import { dateMark, toSlackText, withSlackDates, withUtcDates } from './mrkdwn.ts';
import { APPROVE_ACTION, REJECT_ACTION, renderPlanMessage } from './plan-render.ts';
import { unreadableNote } from './command-policy.ts';
import { checkListed, describeListed, slackUserGroups, type UserGroupReader } from './user-groups.ts';
import { mention } from '../../core/mention.ts';

export interface ApprovalOptions {
  config: Config;
  plans: PlanStore;
  /** Queues the approved plan's run on the execute queue (JobQueues.enqueue). */
  enqueue: QueueExecution;
  log: Logger;
  /** Clock for expiry; tests move it. */
  now?: () => number;
  /** The audit trail: approvals, rejections and refusals are recorded there too. */
  audit?: AuditRecorder;
  /** A rejected or expired plan ends here: repairs_total. */
  metrics?: Pick<Metrics, 'recordRepair'>;
}

type Decision = 'approve' | 'reject';

interface Click {
  user: string;
  channel: string;
  messageTs: string | undefined;
  planId: string;
  responseUrl: string | undefined;
  slack: SlackGateway;
  /** The members of user groups listed in slack.approvers. */
  groups: UserGroupReader;
}

/**
 * The Approve / Reject buttons of a repair plan, for createSlackApp's `registerExtras`.
 * Every click is authorized again on arrival (plan known, same channel and message, approver,
 * not the requester unless selfApproval) and decided by one atomic Redis transition, so a plan
 * runs at most once however many clicks arrive; every refusal is answered to the clicker only
 * and recorded with the plan.
 */
export function approvalHandlers(options: ApprovalOptions): (app: App, slack: SlackGateway) => void {
  checkQuorumKeys(options.config);
  return (app, slack) => {
    const groups = slackUserGroups(slack.reader, options.config.slack.userGroupCacheMs, options.now);
    for (const [actionId, decision] of [
      [APPROVE_ACTION, 'approve'],
      [REJECT_ACTION, 'reject'],
    ] as const) {
      app.action<BlockAction<ButtonAction>>(actionId, async ({ ack, body, action }) => {
        await ack();
        const click: Click = {
          user: body.user.id,
          channel: body.channel?.id ?? '',
          messageTs: body.message?.ts,
          planId: action.value ?? '',
          responseUrl: body.response_url,
          slack,
          groups,
        };
        await decide(options, decision, click);
      });
    }
  };
}

/** A quorum for a repair that does not exist (a typo such as fix-dsn) would silently leave the real one at the default. */
function checkQuorumKeys(config: Config): void {
  for (const key of Object.keys(config.slack.approvalsRequiredFor ?? {})) {
    if (!(FIX_NAMES as readonly string[]).includes(key)) {
      throw new ConfigError(`slack.approvalsRequiredFor.${key}: no repair "${key}"`, `Use one of ${FIX_NAMES.join(', ')}`);
    }
  }
}

async function decide(options: ApprovalOptions, decision: Decision, click: Click): Promise<void> {
  const { plans, config } = options;
  const now = options.now ?? Date.now;
  const log = options.log.child({ component: 'approvals', plan: click.planId, user: click.user, channel: click.channel, decision });
  let stored: StoredPlan | null = null;
  const refuse = async (shown: string) => {
    const reason = withUtcDates(shown);
    log.warn({ reason }, 'repair decision refused');
    if (stored) {
      await plans.recordRefusal(click.planId, { user: click.user, action: decision, reason, at: now() }).catch((err: unknown) => log.error({ err: describeError(err) }, 'could not record a refusal'));
    }
    await options.audit?.record({ kind: 'refusal', actor: click.user, channel: click.channel, action: decision, ...(stored ? { target: stored.plan.target } : {}), outcome: 'refused', detail: reason, planId: click.planId.slice(0, 64) });
    await tellClicker(click, shown, log);
  };
  try {
    stored = /^[0-9a-f]{16}$/.test(click.planId) ? await plans.get(click.planId) : null;
    if (!stored) return await refuse('This plan is not known any more (it expired from storage, or was never stored). Run the /maas fix command again for a fresh plan.');
    const why = await authorizationProblem(config, decision, click, stored);
    if (why) return await refuse(why);

    const result = await plans.decide(click.planId, decision === 'approve' ? 'approved' : 'rejected', click.user, now());
    if (!result.ok && result.why === 'waiting') return await recordPartialApproval(options, click, stored, result);
    if (!result.ok) {
      if (result.why === 'missing') return await refuse('This plan is not known any more. Run the /maas fix command again.');
      if (result.why === 'expired') {
        await updateMessage(options, click, { ...stored, state: 'expired' });
        options.metrics?.recordRepair(stored.plan.kind, 'expired');
        return await refuse(`This plan expired at ${dateMark(stored.expiresAt)} without approval; nothing was changed. Run \`/maas ${stored.plan.kind} ${stored.plan.target}\` again for a fresh plan.`);
      }
      const by = result.by ? ` by ${mention(result.by)}` : '';
      const at = result.at ? ` at ${dateMark(result.at)}` : '';
      return await refuse(`This plan was already ${stateWord(result.state)}${by}${at}; a plan is decided once and runs at most once.`);
    }
    const decided = (await plans.get(click.planId)) ?? stored;
    if (decision === 'reject') options.metrics?.recordRepair(stored.plan.kind, 'rejected');
    await updateMessage(options, click, decided);
    log.info({ kind: stored.plan.kind, target: stored.plan.target }, decision === 'approve' ? 'repair plan approved' : 'repair plan rejected');
    await options.audit?.record({
      kind: decision === 'approve' ? 'approval' : 'rejection',
      actor: click.user,
      channel: click.channel,
      action: stored.plan.kind,
      target: stored.plan.target,
      outcome: decision === 'approve' ? 'approved' : 'rejected',
      detail: stored.plan.verdict,
      planId: stored.plan.id,
    });
    if (decision === 'approve') await queueExecution(options, click, decided, log);
  } catch (err) {
    log.error({ err: describeError(err) }, 'repair decision failed');
    await tellClicker(click, `Your ${decision === 'approve' ? 'approval' : 'rejection'} could not be recorded: ${describeError(err)}. Nothing was run; try again in a minute.`, log);
  }
}

/** One approval of several: counted once per approver, shown on the plan, and the plan waits for the rest. */
async function recordPartialApproval(options: ApprovalOptions, click: Click, stored: StoredPlan, result: { count: number; required: number; duplicate: boolean }): Promise<void> {
  const log = options.log.child({ component: 'approvals', plan: click.planId, user: click.user });
  const left = result.required - result.count;
  const more = `${left} more distinct approver${left === 1 ? '' : 's'}`;
  if (result.duplicate) return tellClicker(click, `You have approved this plan already; an approver counts once. It still waits for ${more}.`, log, ':ballot_box_with_check:');
  await updateMessage(options, click, (await options.plans.get(click.planId)) ?? stored);
  log.info({ count: result.count, required: result.required }, 'repair plan approval counted');
  await options.audit?.record({
    kind: 'approval',
    actor: click.user,
    channel: click.channel,
    action: stored.plan.kind,
    target: stored.plan.target,
    outcome: `approved (${result.count} of ${result.required})`,
    detail: stored.plan.verdict,
    planId: stored.plan.id,
  });
  await tellClicker(click, `Your approval is counted (${result.count} of ${result.required}); the plan runs after ${more} approve it.`, log, ':ballot_box_with_check:');
}

/** Who may do what, checked on every click: never trust that the button was shown to the right person. */
async function authorizationProblem(config: Config, decision: Decision, click: Click, stored: StoredPlan): Promise<string | undefined> {
  const policy = config.slack;
  if (stored.channel !== click.channel) return 'This plan belongs to another channel; decide it there.';
  if (stored.messageTs && click.messageTs && stored.messageTs !== click.messageTs) return "This button is not on the plan's own message; use the buttons on the plan message.";
  if (decision === 'reject' && click.user === stored.requester) return undefined;
  if (decision === 'approve' && !policy.approvers.length) return 'No approvers are configured (slack.approvers), so no repair runs from Slack. Use `maas-chatops <fix> <target> --apply` from a terminal.';
  const approver = await checkListed(policy.approvers, click.user, click.groups);
  const unreadable = unreadableNote('approvers', approver.unreadable);
  if (decision === 'reject') {
    return approver.listed ? undefined : `Only an approver (slack.approvers) or the person who asked for the plan may reject it.${unreadable}`;
  }
  if (!approver.listed) return `Only approvers (slack.approvers) may approve a repair, and you are not one. Ask one of ${describeListed(policy.approvers)}.${unreadable}`;
  if (click.user === stored.requester && !policy.selfApproval) return 'You asked for this plan, so someone else must approve it (slack.selfApproval is off). Ask another approver.';
  return undefined;
}

async function queueExecution(options: ApprovalOptions, click: Click, stored: StoredPlan, log: Logger): Promise<void> {
  // The plan message is edited with the result; its thread carries the progress and any error.
  const data: ExecuteJobData = { planId: stored.plan.id, approvedBy: click.user };
  try {
    await options.enqueue(REPAIR_EXECUTE_JOB, data, { jobId: executionJobId(stored.plan.id, stored.decidedAt) });
  } catch (err) {
    if (!(await options.plans.undoApproval(stored.plan.id, click.user))) {
      // The queue answered late but the job landed and a worker has started it: nothing to undo.
      log.warn({ err: describeError(err) }, 'the queue answered slowly, but the run has started');
      return;
    }
    log.error({ err: describeError(err) }, 'approved, but the run could not be queued; approval undone');
    await updateMessage(options, click, { ...stored, state: 'pending' });
    await tellClicker(click, `Approved, but the run could not be queued (${describeError(err)}), so the approval was undone and nothing ran. Click Approve again in a minute.`, log);
  }
}

async function updateMessage(options: ApprovalOptions, click: Click, stored: StoredPlan & { state: PlanState }): Promise<void> {
  const ts = stored.messageTs ?? click.messageTs;
  if (!ts) return;
  try {
    await click.slack.update(stored.channel, ts, renderPlanMessage(planView(stored, { approvers: options.config.slack.approvers })), { what: 'update a plan', paced: false });
  } catch (err) {
    options.log.error({ plan: stored.plan.id, err: describeError(err) }, 'could not update the plan message');
  }
}

/** Only the clicker sees it: through the click's response_url, else chat.postEphemeral. */
async function tellClicker(click: Click, text: string, log: Logger, emoji = ':no_entry:'): Promise<void> {
  // Times show in each reader's own zone, UTC where a client cannot (Slack date tokens).
  const message = { text: withSlackDates(toSlackText(`${emoji} ${text}`)) };
  if (click.responseUrl) {
    try {
      await click.slack.respond(click.responseUrl, message, { visibility: 'ephemeral', replaceOriginal: false }, 'answer a click');
      return;
    } catch (err) {
      log.warn({ err: describeError(err) }, 'response_url failed; answering with chat.postEphemeral');
    }
  }
  try {
    await click.slack.postEphemeral(click.channel, click.user, message, { what: 'answer a click', paced: false });
  } catch (err) {
    log.error({ err: describeError(err) }, 'could not tell the clicker why their click was refused');
  }
}

function stateWord(state: PlanState): string {
  const words: Record<PlanState, string> = {
    pending: 'pending',
    approved: 'approved',
    executing: 'approved and is running',
    done: 'approved and has run',
    failed: 'approved and has run',
    rejected: 'rejected',
    expired: 'expired',
    superseded: 'approved, then superseded by a new plan',
  };
  return words[state];
}
