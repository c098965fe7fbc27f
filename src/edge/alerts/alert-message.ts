import type { ActionsBlock, Button, ContextBlock, HeaderBlock, KnownBlock, SectionBlock } from '@slack/types';
import { SLACK_MESSAGE_LIMITS } from '../slack/message-limits.ts';
import { formatDuration } from '../../core/duration.ts';
import { mention } from '../../core/mention.ts';
import { oneLine } from '../../core/one-line.ts';
import type { Report, ReportKind, Status } from '../../core/report.ts';
import { clipText, codeSpan, inline, slackDate, slackDateAgo, toSlackText } from '../slack/mrkdwn.ts';
import { verdictLine } from '../slack/answer-render.ts';
import { renderEvidence, type EvidenceThread } from '../slack/evidence-thread.ts';
import { ALERT_ACTIONS } from './alert-action-ids.ts';
import type { AlertMember, AlertRecord, Silence } from './alert-record.ts';
import type { AlertEvent, MemberChange } from './transition.ts';

export interface AlertMessage {
  /** Fallback text: starts with the verdict. */
  text: string;
  blocks?: KnownBlock[];
}

export { ALERT_ACTIONS };

const WORD: Record<Status, string> = { ok: 'OK', warning: 'WARNING', critical: 'CRITICAL', error: 'ERROR' };
const MAX_SUBJECTS = 10;
const THREAD_MAX = 2900;

/** The alert's one message, in whichever state it is. */
export function renderAlert(record: AlertRecord, now: number, silence?: Silence): AlertMessage {
  return record.state === 'resolved' ? renderResolved(record) : renderOpen(record, now, silence);
}

/** The alert as a report: what its evidence thread shows. */
export function alertReport(record: AlertRecord): Report {
  return {
    kind: record.check as ReportKind,
    target: record.target,
    status: record.status,
    verdict: record.verdict,
    findings: record.findings,
    startedAt: new Date(record.lastSeenAt).toISOString(),
    durationMs: 0,
  };
}

/** An open alert is its verdict, its age and its buttons; its findings, whole, are in its thread (alertEvidence). */
function renderOpen(record: AlertRecord, now: number, silence: Silence | undefined): AlertMessage {
  const unchecked = record.kind === 'unchecked';
  const word = unchecked ? 'COULD NOT CHECK' : WORD[record.status];
  const verdict = section(verdictLine(alertReport(record), word));
  const n = record.findings.length;
  const counted = n ? ` · ${n} finding${n === 1 ? '' : 's'} (${codeList(record.findings)}), the evidence is in the thread` : '';
  const context = contextBlock(`${openContext(record, now, silence)}${counted}`);
  const text = unchecked ? record.verdict : `${word}: ${record.verdict} (${record.check} ${record.target})`;
  return { text: clipText(inline(text), 3000), blocks: [verdict, context, actionsBlock(record)] };
}

/** The replies under a newly posted alert: every finding whole, as under a check's answer. */
export function alertEvidence(record: AlertRecord): EvidenceThread {
  return renderEvidence(alertReport(record));
}

function codeList(findings: AlertRecord['findings']): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
  const shown = [...counts].slice(0, 4).map(([c, k]) => `${codeSpan(c, 60)}${k > 1 ? ` ×${k}` : ''}`);
  return `${shown.join(', ')}${counts.size > 4 ? ', …' : ''}`;
}

function renderResolved(record: AlertRecord): AlertMessage {
  const lasted = formatDuration((record.resolvedAt ?? record.lastSeenAt) - record.openedAt);
  const what = record.kind === 'unchecked' ? 'checking works again' : 'no longer found';
  const header = headerBlock(oneLine(`:white_check_mark: RESOLVED · ${record.check} ${record.target}`));
  const summary = section(`*Resolved after ${lasted}* (${what}). It was: ${inline(record.verdict)}`);
  const list = section(memberList(record.members));
  const context = contextBlock(`Opened ${when(record.openedAt)} · resolved ${when(record.resolvedAt ?? record.lastSeenAt)}${reopenedNote(record)}`);
  return { text: clipText(inline(`RESOLVED after ${lasted}: ${record.verdict} (${record.check} ${record.target})`), 3000), blocks: [header, summary, list, context] };
}

/** The thread line that goes with a transition, if it needs one. */
export function threadNote(event: AlertEvent, change: MemberChange, record: AlertRecord, now: number): string | undefined {
  switch (event) {
    case 'changed':
      return clipText(changeLines(change).join('\n'), THREAD_MAX);
    case 'reopened': {
      const quiet = formatDuration(Math.max(0, now - (record.lastResolvedAt ?? now)));
      const lines = [`:repeat: Back after ${quiet} resolved: re-opened (${ordinal(record.reopened)} time). ${inline(record.verdict)}`];
      return clipText([...lines, ...changeLines(change)].join('\n'), THREAD_MAX);
    }
    case 'resolved':
      return `:white_check_mark: Resolved: the scan at ${when(now)} found none of it. It lasted ${formatDuration(now - record.openedAt)}.`;
    default:
      return undefined;
  }
}

function changeLines(change: MemberChange): string[] {
  const lines: string[] = [];
  if (change.added.length) lines.push(`:heavy_plus_sign: ${change.added.length} new: ${subjects(change.added)}`);
  if (change.removed.length) lines.push(`:heavy_minus_sign: ${change.removed.length} no longer found: ${subjects(change.removed)}`);
  if (change.changed.length) lines.push(`:pencil2: evidence changed for ${change.changed.length}: ${subjects(change.changed)}`);
  return lines;
}

/** Each code once, with its count and its first subjects: `MAC_DRIFT` ×9: node-1, node-2, …and 7 more; `MAC_IN_USE` node-4. */
function subjects(members: readonly AlertMember[]): string {
  const byCode = new Map<string, string[]>();
  for (const m of members) {
    const names = byCode.get(m.code) ?? [];
    names.push(m.subject);
    byCode.set(m.code, names);
  }
  let room = MAX_SUBJECTS;
  const groups = [...byCode].map(([code, names]) => {
    const shown = names.slice(0, Math.max(1, room));
    room -= shown.length;
    const more = names.length > shown.length ? `, …and ${names.length - shown.length} more` : '';
    const count = names.length > 1 ? ` ×${names.length}:` : '';
    return `${codeSpan(code, 40)}${count} ${shown.map((s) => clipText(inline(s), 120)).join(', ')}${more}`;
  });
  return groups.join('; ');
}

function memberList(members: readonly AlertMember[]): string {
  if (!members.length) return '_nothing recorded_';
  return clipText(`Was: ${subjects(members)}`, 2900);
}

function openContext(record: AlertRecord, now: number, silence: Silence | undefined): string {
  const parts = [
    now - record.openedAt < 1000 ? `Opened just now (${when(record.openedAt)})` : `Open for ${formatDuration(now - record.openedAt)} (since ${when(record.openedAt)})`,
    // Slack keeps "(5 minutes ago)" current: a scanner that stopped shows here even if nothing edits the alert.
    `last checked ${slackDateAgo(record.lastSeenAt)}`,
  ];
  const note = reopenedNote(record);
  if (note) parts.push(note.slice(3));
  if (silence) parts.push(`silenced by ${toSlackText(mention(oneLine(silence.by)))} until ${when(silence.until)}`);
  return parts.join(' · ');
}

function reopenedNote(record: AlertRecord): string {
  return record.reopened ? ` · re-opened ${record.reopened}×` : '';
}

function actionsBlock(record: AlertRecord): ActionsBlock {
  const value = JSON.stringify({ check: record.check, target: record.target });
  const recheck: Button = { type: 'button', action_id: ALERT_ACTIONS.recheck, text: { type: 'plain_text', text: 'Re-check now' }, value };
  const planFix: Button = { type: 'button', action_id: ALERT_ACTIONS.planFix, text: { type: 'plain_text', text: 'Plan fix' }, value, style: 'primary' };
  const silence: Button = { type: 'button', action_id: ALERT_ACTIONS.silence, text: { type: 'plain_text', text: 'Silence 1h' }, value };
  // Nothing to fix when the target could not be looked at, nor when all it found are warnings; checking again is the next step.
  const fixable = record.kind === 'drift' && (record.status === 'critical' || record.status === 'error');
  return { type: 'actions', block_id: `alert_actions`, elements: fixable ? [planFix, recheck, silence] : [recheck, silence] };
}

const when = slackDate;

function ordinal(n: number): string {
  const tail = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${tail}`;
}

function headerBlock(text: string): HeaderBlock {
  return { type: 'header', text: { type: 'plain_text', text: clipText(text, 150), emoji: true } };
}

function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: clipText(text, 3000) } };
}

function contextBlock(text: string): ContextBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clipText(text, SLACK_MESSAGE_LIMITS.contextElementText) }] };
}
