import type { AuditEntry } from './audit-entry.ts';
import { channelMention, mention } from '../../core/mention.ts';

const USER_ID = /^[UW][A-Z0-9]{2,20}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,20}$/;

function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function what(e: AuditEntry): string {
  return [e.action, e.target, e.subject].filter(Boolean).join(' ');
}

/** One entry for Slack (mrkdwn before escaping): Slack ids become mentions, everything else stays text. */
export function auditLineForSlack(e: AuditEntry): string {
  const who = USER_ID.test(e.actor) ? mention(e.actor) : e.actor;
  const where = e.channel && CHANNEL_ID.test(e.channel) ? ` in ${channelMention(e.channel)}` : '';
  const plan = e.planId ? ` (plan ${e.planId})` : '';
  const detail = e.detail ? `: ${e.detail}` : '';
  return `${utc(e.at)} · ${who}${where} · ${e.kind} ${what(e).replace(/`/g, "'")}${plan} → ${e.outcome}${detail}`;
}

export function auditTextForSlack(entries: readonly AuditEntry[], target?: string): string {
  const about = target ? ` about ${target}` : '';
  if (!entries.length) return `The audit trail holds nothing${about} yet.`;
  return [`The latest ${entries.length} audit entr${entries.length === 1 ? 'y' : 'ies'}${about}, newest first:`, ...entries.map((e) => `• ${auditLineForSlack(e)}`)].join('\n');
}

/** One entry per line for a terminal: time, kind, who, where, what, outcome, detail. */
export function auditTextForTerminal(entries: readonly AuditEntry[]): string {
  if (!entries.length) return 'The audit trail is empty.';
  return entries
    .map((e) => [new Date(e.at).toISOString(), e.kind, e.actor, e.channel ?? '-', what(e) || '-', e.outcome, e.planId ? `plan=${e.planId}` : '', e.detail ?? ''].filter(Boolean).join('  '))
    .join('\n');
}
