import type { PlanMessageView } from '../repair/plan-view.ts';
import { clipText, toSlackText } from './mrkdwn.ts';
import { renderReport, SLACK_LIMITS } from './render.ts';

export const APPROVE_ACTION = 'repair_approve';
export const REJECT_ACTION = 'repair_reject';

/** A plan as a Slack message: the report, a status line, and while pending the Approve / Reject buttons. */
export function renderPlanMessage(view: PlanMessageView): { text: string; blocks: unknown[] } {
  const status = clipText(statusLine(view), SLACK_LIMITS.contextText);
  const rendered = renderReport(view.report, { reserveBlocks: 2, reserveChars: status.length });
  const blocks: unknown[] = [...rendered.blocks, { type: 'context', elements: [{ type: 'mrkdwn', text: status }] }];
  if (view.state === 'pending' && view.approvable) blocks.push(buttons(view.planId));
  return { text: clipText(`${rendered.text} · ${plainStatus(view)}`, 3000), blocks };
}

function buttons(planId: string): unknown {
  return {
    type: 'actions',
    block_id: `repair_decision:${planId}`,
    elements: [
      { type: 'button', action_id: APPROVE_ACTION, text: { type: 'plain_text', text: 'Approve and run' }, style: 'primary', value: planId },
      { type: 'button', action_id: REJECT_ACTION, text: { type: 'plain_text', text: 'Reject' }, style: 'danger', value: planId },
    ],
  };
}

export function statusLine(view: PlanMessageView): string {
  const by = view.decidedBy ? `<@${view.decidedBy}>` : 'someone';
  const at = view.decidedAt !== undefined ? ` at ${utc(view.decidedAt)}` : '';
  const note = view.note ? ` ${view.note}` : '';
  const id = `plan \`${view.planId}\``;
  switch (view.state) {
    case 'pending':
      return view.approvable
        ? toSlackText(`:hourglass: Requested by <@${view.requester}>; awaiting approval by an approver until ${utc(view.expiresAt)} (${id}).${note}`)
        : toSlackText(`:lock: Requested by <@${view.requester}>. No approvers are configured (slack.approvers), so no repair runs from Slack; use \`maas-chatops ${view.report.kind} ${view.report.target} --apply\` (${id}).${note}`);
    case 'approved':
    case 'executing':
      return toSlackText(`:white_check_mark: Approved by ${by}${at}; running, progress in the thread (${id}).${note}`);
    case 'rejected':
      return toSlackText(`:no_entry: Rejected by ${by}${at}; nothing was changed (${id}).${note}`);
    case 'expired':
      return toSlackText(`:alarm_clock: Expired at ${utc(view.expiresAt)} without approval; nothing was changed. Run \`/maas ${view.report.kind} ${view.report.target}\` again (${id}).${note}`);
    case 'superseded':
      return toSlackText(`:arrows_counterclockwise: Approved by ${by}${at}, but not run: the world changed before it could (${id}).${note}`);
    case 'done':
      return toSlackText(`:white_check_mark: Done, approved by ${by}${at}: ${view.report.verdict} (${id}).${note}`);
    case 'failed':
      return toSlackText(`:x: Approved by ${by}${at}: ${view.report.verdict} (${id}).${note}`);
  }
}

function plainStatus(view: PlanMessageView): string {
  const labels: Record<PlanMessageView['state'], string> = {
    pending: view.approvable ? 'awaiting approval' : 'no approvers configured',
    approved: 'approved, running',
    executing: 'running',
    rejected: 'rejected',
    expired: 'expired',
    superseded: 'not run: the world changed',
    done: 'done',
    failed: 'stopped',
  };
  return labels[view.state];
}

export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
