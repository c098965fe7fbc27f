import type { AuditEntry } from './audit-entry.ts';

/** What a postmortem asks of each event: when, what sort, who, about what, and one line of it. */
export type TimelineKind = 'alert' | 'check' | 'plan' | 'approval' | 'write' | 'repair' | 'command';

export interface TimelineEvent {
  /** ISO 8601, UTC. */
  at: string;
  kind: TimelineKind;
  actor: string;
  target: string | null;
  summary: string;
  /** What the kind adds: a write's action, subject, outcome and read-back; a plan's id. */
  detail?: Record<string, string>;
}

export interface Timeline {
  target: string;
  since: string;
  until: string;
  events: TimelineEvent[];
  /** The trail held more than one timeline reads: the oldest events are all there, the newest are not. */
  truncated: boolean;
}

const KIND_OF: Record<AuditEntry['kind'], TimelineKind> = {
  command: 'command',
  refusal: 'command',
  plan: 'plan',
  approval: 'approval',
  rejection: 'approval',
  'repair-step': 'write',
  repair: 'repair',
  alert: 'alert',
  check: 'check',
};

/** Each kind's name, one and many, in the order counts are told. */
const NAMES: Record<TimelineKind, readonly [string, string]> = {
  alert: ['alert event', 'alert events'],
  check: ['check', 'checks'],
  plan: ['plan', 'plans'],
  approval: ['decision', 'decisions'],
  write: ['write', 'writes'],
  repair: ['repair ended', 'repairs ended'],
  command: ['command', 'commands'],
};

function about(e: AuditEntry): string {
  return [e.action, e.target].filter(Boolean).join(' ');
}

function summaryOf(e: AuditEntry): string {
  const why = e.detail ? `: ${e.detail}` : '';
  switch (e.kind) {
    case 'refusal':
      return `refused ${about(e)}${why}`;
    case 'command':
      return `/maas ${about(e)} → ${e.outcome}`;
    case 'plan':
      return `${about(e)}: plan posted for approval${why}`;
    case 'approval':
    case 'rejection':
      return `${e.outcome} the ${about(e)} plan`;
    case 'repair-step':
      return `${e.action} ${e.subject ?? e.target ?? ''}: ${e.outcome}${why}`;
    case 'repair':
      return `${about(e)} ended: ${e.outcome}${why}`;
    case 'alert':
      return `${about(e)} alert ${e.outcome}${e.subject ? ` (${e.subject})` : ''}`;
    case 'check':
      return `${about(e)}: ${e.outcome}${why}`;
  }
}

function detailOf(e: AuditEntry): Record<string, string> | undefined {
  const detail: Record<string, string> = {};
  if (e.kind === 'repair-step') {
    detail.action = e.action;
    if (e.subject) detail.subject = e.subject;
    detail.outcome = e.outcome;
    if (e.detail) detail.readBack = e.detail;
  }
  if (e.planId) detail.planId = e.planId;
  if (e.channel) detail.channel = e.channel;
  return Object.keys(detail).length ? detail : undefined;
}

/** One audit entry as a timeline event. */
export function timelineEvent(e: AuditEntry): TimelineEvent {
  const detail = detailOf(e);
  return { at: new Date(e.at).toISOString(), kind: KIND_OF[e.kind], actor: e.actor, target: e.target ?? null, summary: summaryOf(e), ...(detail ? { detail } : {}) };
}

export function buildTimeline(entries: readonly AuditEntry[], scope: { target: string; since: number; until: number; truncated: boolean }): Timeline {
  const events = [...entries].sort((a, b) => a.at - b.at || a.id.localeCompare(b.id)).map(timelineEvent);
  return { target: scope.target, since: new Date(scope.since).toISOString(), until: new Date(scope.until).toISOString(), events, truncated: scope.truncated };
}

/** `3 checks, 1 plan, …` in a fixed order, kinds with no event left out. */
export function timelineCounts(events: readonly TimelineEvent[]): string {
  const counts = new Map<TimelineKind, number>();
  for (const e of events) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  return (Object.keys(NAMES) as TimelineKind[]).flatMap((k) => {
    const n = counts.get(k);
    return n ? [`${n} ${NAMES[k][n === 1 ? 0 : 1]}`] : [];
  }).join(', ');
}

/** The newest check's verdict, else the newest alert's state: what the target looks like now, as far as the trail knows. */
export function currentVerdict(events: readonly TimelineEvent[]): string | undefined {
  const last = [...events].reverse().find((e) => e.kind === 'check' || e.kind === 'alert');
  return last ? `${last.summary} (${isoSeconds(last.at)})` : undefined;
}

/** A Markdown table cell: one line, no pipe that ends the cell, no markup that a viewer would follow. */
function cell(text: string): string {
  return text
    .replace(/[\r\n\u2028\u2029]+/g, ' ⏎ ')
    .replace(/\|/g, '\\|')
    .replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'))
    .replace(/([[\]`*_])/g, '\\$1');
}

/** ISO 8601 in UTC to the second, as files carry times: `2026-12-01T03:09:00Z`. */
function isoSeconds(iso: string): string {
  return `${iso.slice(0, 19)}Z`;
}

/** The whole timeline as a Markdown document: times in ISO 8601 (UTC), every event one row, nothing cut. */
export function timelineMarkdown(t: Timeline): string {
  const lines = [
    `# Timeline: ${cell(t.target)}`,
    '',
    `From ${isoSeconds(t.since)} to ${isoSeconds(t.until)}: ${t.events.length} event${t.events.length === 1 ? '' : 's'}${t.events.length ? ` (${timelineCounts(t.events)})` : ''}.`,
  ];
  const verdict = currentVerdict(t.events);
  if (verdict) lines.push('', `Latest verdict: ${cell(verdict)}`);
  if (t.truncated) lines.push('', `The trail holds more events than one timeline reads; the last one here is at ${isoSeconds(t.events.at(-1)?.at ?? t.until)}. Ask again with a later start for the rest.`);
  if (!t.events.length) return [...lines, '', 'The audit trail holds nothing for this span.', ''].join('\n');
  lines.push('', '| Time (UTC) | Kind | Who | Target | What |', '| --- | --- | --- | --- | --- |');
  for (const e of t.events) {
    const extra = e.detail?.planId ? ` (plan ${e.detail.planId})` : '';
    lines.push(`| ${isoSeconds(e.at)} | ${e.kind} | ${cell(e.actor)} | ${cell(e.target ?? '-')} | ${cell(e.summary + extra)} |`);
  }
  return `${lines.join('\n')}\n`;
}
