import type { Finding, Status } from '../../core/report.ts';

/**
 * What kind of problem an alert is about. A target that could not be checked is a different
 * problem from drift, with a different next step, so it gets its own message.
 */
export type AlertKind = 'drift' | 'unchecked';

/** One finding's identity inside an alert: the fingerprint of (check, target, code, subject). */
export interface AlertMember {
  fingerprint: string;
  code: string;
  subject: string;
  /** Hash of the finding's evidence: a change is noted in the alert's thread. */
  digest: string;
  since: number;
}

/**
 * One alert: every finding of one kind for one (check, target). A site-wide storm of twelve
 * MAC_DRIFT findings is one message listing them, not twelve.
 */
export interface AlertRecord {
  id: string;
  check: string;
  target: string;
  kind: AlertKind;
  state: 'open' | 'resolved';
  openedAt: number;
  lastSeenAt: number;
  resolvedAt?: number;
  /** When it was last resolved, kept after a re-open to say how long it was quiet. */
  lastResolvedAt?: number;
  /** How often it came back within the quiet period after a resolve. */
  reopened: number;
  status: Status;
  verdict: string;
  /** The findings the message shows: the current ones, or the last ones once resolved. */
  findings: Finding[];
  members: AlertMember[];
  /** The Slack message, once posted. */
  channel?: string;
  ts?: string;
  /** When its Slack message was last posted or edited: what the message shows is as of then. */
  shownAt?: number;
  /** The silence that message shows (its end), if any: a silence set or lifted since is news to show. */
  shownSilenceUntil?: number;
  /** The last Slack call for it failed: the next reconcile brings the message up to date. */
  unsynced?: boolean;
}

/** A target muted by someone until a time. */
export interface Silence {
  target: string;
  by: string;
  at: number;
  until: number;
}
