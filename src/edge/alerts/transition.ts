import type { Finding } from '../../core/report.ts';
import type { AlertMember, AlertRecord } from './alert-record.ts';
import { alertIdOf, evidenceDigest, fingerprintOf } from './fingerprint.ts';
import type { KindObservation } from './observe-scan.ts';

export type AlertEvent = 'opened' | 'reopened' | 'changed' | 'unchanged' | 'resolved' | 'none';

export interface MemberChange {
  added: AlertMember[];
  removed: AlertMember[];
  /** Still there, with different evidence. */
  changed: AlertMember[];
}

export interface Transition {
  event: AlertEvent;
  /** The record to store; undefined when there is nothing to keep. */
  record: AlertRecord | undefined;
  change: MemberChange;
}

export interface TransitionContext {
  check: string;
  target: string;
  now: number;
  /** A resolved alert that comes back within this is re-opened, not posted anew. */
  quietMs: number;
  /** Part of the target went unchecked in this scan: absent drift is not evidence of a fix. */
  partial: boolean;
}

const NO_CHANGE: MemberChange = { added: [], removed: [], changed: [] };

/** The next state of one alert given what one scan saw. Pure: no clock, no I/O. */
export function transition(prev: AlertRecord | undefined, seen: KindObservation, ctx: TransitionContext): Transition {
  const members = membersOf(seen, ctx, prev);
  if (members.length === 0) return whenAbsent(prev, seen, ctx);
  const fresh = { verdict: seen.verdict, status: seen.status, lastSeenAt: ctx.now };

  if (!prev || (prev.state === 'resolved' && ctx.now - (prev.resolvedAt ?? 0) > ctx.quietMs)) {
    const record: AlertRecord = {
      id: alertIdOf(ctx.check, ctx.target, seen.kind),
      check: ctx.check,
      target: ctx.target,
      kind: seen.kind,
      state: 'open',
      openedAt: ctx.now,
      reopened: 0,
      findings: seen.findings,
      members,
      ...fresh,
    };
    return { event: 'opened', record, change: { ...NO_CHANGE, added: members } };
  }

  if (prev.state === 'resolved') {
    const { resolvedAt: _gone, ...rest } = prev;
    const record: AlertRecord = { ...rest, ...fresh, state: 'open', reopened: prev.reopened + 1, findings: seen.findings, members };
    if (prev.resolvedAt !== undefined) record.lastResolvedAt = prev.resolvedAt;
    return { event: 'reopened', record, change: diffMembers(prev.members, members) };
  }

  const kept = seen.kind === 'drift' && ctx.partial ? prev.members.filter((m) => !members.some((s) => s.fingerprint === m.fingerprint)) : [];
  const keptFindings = prev.findings.filter((f) => kept.some((m) => m.fingerprint === fingerprintOf(ctx.check, ctx.target, f.code, f.subject)));
  const allMembers = [...members, ...kept];
  const change = diffMembers(prev.members, allMembers);
  const record: AlertRecord = { ...prev, ...fresh, findings: [...seen.findings, ...keptFindings], members: allMembers };
  const changed = change.added.length + change.removed.length + change.changed.length > 0;
  return { event: changed ? 'changed' : 'unchanged', record, change };
}

function whenAbsent(prev: AlertRecord | undefined, seen: KindObservation, ctx: TransitionContext): Transition {
  if (!prev || prev.state === 'resolved') return { event: 'none', record: prev, change: NO_CHANGE };
  if (seen.kind === 'drift' && ctx.partial) return { event: 'none', record: prev, change: NO_CHANGE };
  const record: AlertRecord = { ...prev, state: 'resolved', resolvedAt: ctx.now };
  return { event: 'resolved', record, change: { ...NO_CHANGE, removed: prev.members } };
}

/** One member per distinct (code, subject); `since` carries over from the previous record. */
function membersOf(seen: KindObservation, ctx: TransitionContext, prev: AlertRecord | undefined): AlertMember[] {
  const out = new Map<string, AlertMember>();
  for (const f of seen.findings) {
    const fingerprint = fingerprintOf(ctx.check, ctx.target, f.code, f.subject);
    if (out.has(fingerprint)) continue;
    const earlier = prev?.state === 'open' ? prev.members.find((m) => m.fingerprint === fingerprint) : undefined;
    out.set(fingerprint, { fingerprint, code: f.code, subject: f.subject, digest: digestOf(seen.kind, f), since: earlier?.since ?? ctx.now });
  }
  return [...out.values()];
}

/** A could-not-check reason varies from run to run (timings, ports); only its presence matters. */
function digestOf(kind: KindObservation['kind'], f: Finding): string {
  return kind === 'unchecked' ? '' : evidenceDigest(f.evidence);
}

export function diffMembers(before: readonly AlertMember[], after: readonly AlertMember[]): MemberChange {
  const old = new Map(before.map((m) => [m.fingerprint, m]));
  const now = new Map(after.map((m) => [m.fingerprint, m]));
  return {
    added: after.filter((m) => !old.has(m.fingerprint)),
    removed: before.filter((m) => !now.has(m.fingerprint)),
    changed: after.filter((m) => {
      const o = old.get(m.fingerprint);
      return o !== undefined && o.digest !== m.digest;
    }),
  };
}
