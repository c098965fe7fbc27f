import { plainMentions } from '../../core/mention.ts';

/** What happened, as the audit trail keeps it: ids and names only, never a secret. */
export type AuditKind =
  | 'command'
  | 'refusal'
  | 'plan'
  | 'approval'
  | 'rejection'
  | 'repair-step'
  | 'alert'
  | 'check'
  | 'repair';

export interface AuditInput {
  kind: AuditKind;
  /** Who: a Slack user id, `terminal:<user>`, or `scheduler`. */
  actor: string;
  /** The Slack channel it happened in, if any. */
  channel?: string;
  /** What: the subcommand, the step's action (`mark_broken`), the alert's check. */
  action: string;
  /** The site or cluster. */
  target?: string;
  /** What was acted on within the target: a machine, an FQDN. */
  subject?: string;
  /** `queued`, `answered`, `refused`, `failed`, `verified`, `opened`, `resolved`… */
  outcome: string;
  /** One line of why, or what was said. */
  detail?: string;
  planId?: string;
  jobId?: string;
  /** Milliseconds since the epoch; default now. */
  at?: number;
}

export interface AuditEntry extends Omit<AuditInput, 'at'> {
  /** The Redis stream id (`<ms>-<seq>`). */
  id: string;
  at: number;
}

export const AUDIT_KINDS: readonly AuditKind[] = ['command', 'refusal', 'plan', 'approval', 'rejection', 'repair-step', 'alert', 'check', 'repair'];

const FIELD_LIMITS: Record<string, number> = { detail: 500, subject: 200, target: 200, action: 100, outcome: 60, actor: 100, channel: 40, planId: 64, jobId: 64 };

/**
 * Text as the trail stores it: one line, at most `max` characters, control, bidi and
 * zero-width characters shown as \u{…} escapes (they could otherwise reorder or hide what a reader sees).
 */
export function printable(text: string, max = 500): string {
  // eslint-disable-next-line no-control-regex, no-misleading-character-class -- these characters are what we look for
  const escaped = text.replace(/[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]|[\u{e0000}-\u{e007f}]/gu, (c) =>
    `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}

/** The input made safe to store: every text field printable and bounded. */
export function normaliseEntry(input: AuditInput, now: number): Omit<AuditEntry, 'id'> {
  const out: Record<string, unknown> = { at: input.at ?? now };
  for (const [key, value] of Object.entries(input)) {
    if (key === 'at' || value === undefined) continue;
    out[key] = printable(plainMentions(String(value)), FIELD_LIMITS[key] ?? 200);
  }
  return out as unknown as Omit<AuditEntry, 'id'>;
}

/** The fields XADD stores, in a stable order. */
export function entryFields(entry: Omit<AuditEntry, 'id'>): string[] {
  const fields: string[] = [];
  for (const key of ['at', 'kind', 'actor', 'channel', 'action', 'target', 'subject', 'outcome', 'detail', 'planId', 'jobId'] as const) {
    const value = entry[key];
    if (value !== undefined) fields.push(key, String(value));
  }
  return fields;
}

/** An entry read back from XRANGE's flat field list; unknown fields are ignored. */
export function entryFromFields(id: string, fields: string[]): AuditEntry {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i] as string, fields[i + 1] as string);
  const kind = map.get('kind') as AuditKind | undefined;
  const entry = { id, at: Number(map.get('at') ?? id.split('-')[0]), kind: kind && AUDIT_KINDS.includes(kind) ? kind : 'command' } as AuditEntry;
  for (const key of ['actor', 'channel', 'action', 'target', 'subject', 'outcome', 'detail', 'planId', 'jobId'] as const) {
    const value = map.get(key);
    if (value !== undefined) entry[key] = value;
    else if (key === 'actor' || key === 'action' || key === 'outcome') entry[key] = '?';
  }
  return entry;
}
