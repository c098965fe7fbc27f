import type { ActionsBlock, ConfirmationDialog, KnownBlock } from '@slack/types';
import { ALERT_ACTIONS } from '../alerts/alert-message.ts';
import type { Report } from '../../core/report.ts';
import type { PlanMessageView } from '../../engine/repair/plan-view.ts';
import { clipText, inline, slackDate, toSlackText } from './mrkdwn.ts';
import { findingLines, section, STATUS_WORD, verdictLine } from './answer-render.ts';
import { renderEvidence, type EvidenceThread } from './evidence-thread.ts';
import { SLACK_LIMITS } from './render.ts';
import { mention } from '../../core/mention.ts';
import { oneLine } from '../../core/one-line.ts';
import { plural, SUBJECT_NOUN, subjectsPhrase } from '../../engine/repair/subjects-phrase.ts';

export const APPROVE_ACTION = 'repair_approve';
export const REJECT_ACTION = 'repair_reject';

/**
 * A plan as a Slack message: its verdict, how many steps on how many machines and how many writes,
 * one line per finding it repairs, a status line, and while pending the Approve / Reject buttons.
 * The steps, whole, and the findings' evidence are in its thread (planThread); so is its progress.
 */
export function renderPlanMessage(view: PlanMessageView): { text: string; blocks: KnownBlock[] } {
  const status = clipText(statusLine(view), SLACK_LIMITS.contextText);
  const shown = shownReport(view);
  const blocks: KnownBlock[] = [section(verdictLine(shown)), section(countLine(shown))];
  const lines = findingLines(shown.findings);
  if (lines.length) blocks.push(section(lines.join('\n')));
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: status }] });
  if (view.state === 'pending' && view.approvable) blocks.push(buttons(view));
  if (view.state === 'done' && view.deferred) blocks.push(nextBatchButton(view));
  const text = `${STATUS_WORD[shown.status]}: ${inline(shown.verdict)}`;
  return { text: clipText(`${text} · ${plainStatus(view)}`, 3000), blocks };
}

/** What goes in a plan message's thread when it is posted: every step whole, every finding's evidence. */
export function planThread(view: PlanMessageView): EvidenceThread {
  return renderEvidence(view.report);
}

/** Steps that only read (verify-…, check-…): the rest write. */
const READ_ONLY_STEP = /^(verify|check)-/;

/** `12 steps on 9 machines: 12 writes, each read back` (planned) or `12 of 12 steps verified on 9 machines` (ran). */
export function countLine(report: Report): string {
  if (report.results) {
    const verified = report.results.filter((r) => r.outcome === 'verified').length;
    const other = report.results.length - verified;
    const on = subjectsPhrase(report.kind, report.results.map((r) => r.subject));
    return `*${verified} of ${plural(report.results.length, 'step')} verified* on ${inline(on)}${other ? `; ${other} did not verify` : ''}; each step's outcome is in the thread.`;
  }
  const steps = report.plan?.steps ?? [];
  const writes = steps.filter((s) => !READ_ONLY_STEP.test(s.action)).length;
  const reads = steps.length - writes;
  const on = subjectsPhrase(report.kind, steps.map((s) => s.subject));
  return `*${plural(steps.length, 'step')}* on ${inline(on)}: ${plural(writes, 'write')}${reads ? ` and ${plural(reads, 'check')}` : ''}, one at a time, each read back. Every step, whole, is in the thread.`;
}

/**
 * A plan that ran shows what changed and was read back (its results), not the findings it
 * repaired nor the steps it planned: a finished repair reads as finished.
 */
function shownReport(view: PlanMessageView): Report {
  if (!view.report.results || (view.state !== 'done' && view.state !== 'failed')) return view.report;
  const { plan: _planned, ...ran } = view.report;
  return { ...ran, findings: [], status: view.state === 'done' ? 'ok' : 'error' };
}

const CHECK_OF: Record<string, string> = { 'fix-macs': 'mac-diff', 'fix-dns': 'dns-check', 'fix-resolver': 'resolver-check' };

/** "Plan the next batch": the alert's "Plan fix" action, `/maas fix-… <target>` with the same checks. */
function nextBatchButton(view: PlanMessageView): ActionsBlock {
  const value = JSON.stringify({ check: CHECK_OF[view.report.kind] ?? view.report.kind, target: view.report.target, batch: (view.batch ?? 1) + 1 });
  return {
    type: 'actions',
    block_id: `repair_next:${view.planId}`,
    elements: [{ type: 'button', action_id: ALERT_ACTIONS.planFix, text: { type: 'plain_text', text: `Plan the next batch (${view.deferred} left)` }, style: 'primary', value }],
  };
}

function buttons(view: PlanMessageView): ActionsBlock {
  const { planId } = view;
  return {
    type: 'actions',
    block_id: `repair_decision:${planId}`,
    elements: [
      { type: 'button', action_id: APPROVE_ACTION, text: { type: 'plain_text', text: 'Approve and run' }, style: 'primary', value: planId, confirm: approveConfirm(view) },
      { type: 'button', action_id: REJECT_ACTION, text: { type: 'plain_text', text: 'Reject' }, style: 'danger', value: planId },
    ],
  };
}

/** Slack's confirm dialog before a repair runs: how many steps on how many machines (or records), or on what. */
function approveConfirm(view: PlanMessageView): ConfirmationDialog {
  const { kind, target } = view.report;
  const steps = view.report.plan?.steps ?? [];
  const on = subjectsPhrase(kind, steps.map((s) => s.subject));
  const where = SUBJECT_NOUN[kind] ? ` at ${target}` : '';
  const text = oneLine(`Runs ${plural(steps.length, 'step')} on ${on}${where}, one at a time, each change read back; it stops at the first that does not verify.`);
  return {
    title: { type: 'plain_text', text: 'Run this repair?' },
    text: { type: 'plain_text', text: clipText(text, 300) },
    confirm: { type: 'plain_text', text: 'Approve and run' },
    deny: { type: 'plain_text', text: 'Cancel' },
    style: 'primary',
  };
}

/** Times in a status line are Slack date tokens (each reader's own zone, UTC as the fallback), put in after escaping. */
const DATE_MARK = /\uE000(\d+)\uE000/g;
const when = (ms: number) => `\uE000${Math.round(ms)}\uE000`;

export function statusLine(view: PlanMessageView): string {
  return statusText(view).replace(DATE_MARK, (_m, ms: string) => slackDate(Number(ms)));
}

/** Who approved and when: every approver of a plan that needed several, else the one who decided. */
function approvedBy(view: PlanMessageView): { by: string; at: string } {
  if (view.approvals && view.approvals.length > 1) {
    return { by: view.approvals.map((a) => `${mention(a.user)} at ${when(a.at)}`).join(' and '), at: '' };
  }
  return { by: view.decidedBy ? mention(view.decidedBy) : 'someone', at: view.decidedAt !== undefined ? ` at ${when(view.decidedAt)}` : '' };
}

/** While a plan needs several approvers: who approved so far, and how many it still waits for. */
function waitingFor(view: PlanMessageView): string {
  const required = view.required ?? 1;
  if (required <= 1) return 'an approver';
  const so = view.approvals?.length ? `; approved so far by ${view.approvals.map((a) => `${mention(a.user)} at ${when(a.at)}`).join(', ')} (${view.approvals.length} of ${required})` : '';
  return `${required} distinct approvers${so}`;
}

function statusText(view: PlanMessageView): string {
  const { by, at } = approvedBy(view);
  const note = view.note ? ` ${noteText(view)}` : '';
  const id = `plan \`${view.planId}\``;
  switch (view.state) {
    case 'pending':
      return view.approvable
        ? toSlackText(`:hourglass: Requested by ${mention(view.requester)}; awaiting approval by ${waitingFor(view)} until ${when(view.expiresAt)} (${id}).${note}`)
        : toSlackText(`:lock: Requested by ${mention(view.requester)}. No approvers are configured (slack.approvers), so no repair runs from Slack; use \`maas-chatops ${view.report.kind} ${view.report.target} --apply\` (${id}).${note}`);
    case 'approved':
    case 'executing':
      return toSlackText(`:white_check_mark: Approved by ${by}${at}; running, progress in the thread (${id}).${note}`);
    case 'rejected':
      return toSlackText(`:no_entry: Rejected by ${by}${at}; nothing was changed (${id}).${note}`);
    case 'expired':
      return toSlackText(`:alarm_clock: Expired at ${when(view.expiresAt)} without approval; nothing was changed. Run \`/maas ${view.report.kind} ${view.report.target}\` again (${id}).${note}`);
    case 'superseded':
      return toSlackText(`:arrows_counterclockwise: Approved by ${by}${at}, but not run: the world changed before it could (${id}).${note}`);
    case 'done':
      return toSlackText(`:white_check_mark: Done, approved by ${by}${at} (${id}).${note}${view.deferred ? ` ${view.deferred} more left for the next batch.` : ''}`);
    case 'failed':
      return toSlackText(`:x: Stopped, approved by ${by}${at} (${id}).${note}`);
  }
}

/**
 * The note on one line; after a run, a re-check that found nothing left to repair reads `the
 * resolver is healthy: …` (not `already`, the run made it so), and an aside inside an aside is
 * left to the thread, where the step's result says it whole.
 */
function noteText(view: PlanMessageView): string {
  const note = oneLine(view.note ?? '').replace(/\uE000/g, '');
  if (view.state !== 'done' && view.state !== 'failed') return note;
  return oneAsideDeep(note.replace(/\bis already healthy \((.*)\)(\.?)$/, 'is healthy: $1$2'));
}

/** `a (b (c) d)` as `a (b d)`: brackets two deep and deeper are dropped with what they hold. */
export function oneAsideDeep(text: string): string {
  let depth = 0;
  let out = '';
  for (const c of text) {
    if (c === '(') depth += 1;
    if (depth < 2) out += c;
    if (c === ')' && depth > 0) depth -= 1;
  }
  return out.replace(/\s+([),;:.])/g, '$1');
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
