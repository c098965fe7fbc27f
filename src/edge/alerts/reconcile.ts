import { describeError } from '../../core/errors.ts';
import type { AuditLog } from '../../engine/audit/audit-log.ts';
import type { Logger } from '../../core/log.ts';
import type { Report } from '../../core/report.ts';
import { alertEvidence, renderAlert, threadNote } from './alert-message.ts';
import type { AlertRecord, Silence } from './alert-record.ts';
import type { AlertSender } from './alert-sender.ts';
import { postEvidenceReplies } from './evidence-replies.ts';
import type { Metrics } from '../../engine/metrics.ts';
import type { AlertStore } from './alert-store.ts';
import { alertIdOf } from './fingerprint.ts';
import { observeScan, type KindObservation, type ScanObservation } from './observe-scan.ts';
import { transition, type AlertEvent } from './transition.ts';

export const DEFAULT_QUIET_MS = 10 * 60_000;
/**
 * How stale an open alert's "last checked" may get before a scheduled scan that found the same
 * thing edits it anyway. chat.update is Tier 3 (about 50 a minute for the workspace) and alert
 * edits share the alert channel's one-a-second lane with new alerts: with an edit on every
 * scheduled scan, 60 open alerts scanned every minute would keep that lane full. A scan someone
 * asked for, and any scan that changed something, edits at once.
 */
export const DEFAULT_REFRESH_MS = 5 * 60_000;

export interface AlertReconcilerOptions {
  store: AlertStore;
  sender: AlertSender;
  /** config.slack.alertChannel; without it alerts are tracked (for /maas alerts) but not posted. */
  channel: string | undefined;
  log: Logger;
  /** A resolved alert that comes back within this re-opens its message; default 10 minutes. */
  quietMs?: number;
  now?: () => number;
  /** An unchanged scheduled scan edits an alert shown longer ago than this; default 5 minutes. */
  refreshMs?: number;
  /** How long a reconcile waits for another one of the same (check, target); default 60 s. */
  lockWaitMs?: number;
  /** Alerts opened, re-opened, changed and resolved go to the audit trail. */
  audit?: AuditLog;
  /** open_alerts by check, read from the store after every reconcile (so every process reports the shared state). */
  metrics?: Pick<Metrics, 'setOpenAlerts'>;
}

export interface ReconcileRequest {
  /** Someone asked for this scan (a command, a Re-check click) and is watching the alert: it is edited even when nothing changed. */
  requested?: boolean;
  /** Who queued the scan, as the audit trail names it: `scheduler` (the default), `watch` (a watch saw a change) or the person who asked. */
  actor?: string;
}

const AUDITED_EVENTS: readonly AlertEvent[] = ['opened', 'reopened', 'changed', 'resolved'];

export interface ReconcileOutcome {
  id: string;
  kind: AlertRecord['kind'];
  event: AlertEvent;
  posted: boolean;
  updated: boolean;
  threaded: boolean;
  /** Silenced, or no alert channel: tracked without a new post or thread line. */
  muted: boolean;
}

const LOCK_TTL_MS = 30_000;

/**
 * Turns scan results into alerts: one post per incident, updates in place, thread lines for
 * changes, resolve on recovery. Reconciles of one (check, target) run one at a time across
 * every process (a Redis lock), so two workers scanning at once still post once.
 */
export class AlertReconciler {
  readonly #o: AlertReconcilerOptions;
  readonly #quietMs: number;
  readonly #refreshMs: number;
  readonly #now: () => number;

  constructor(options: AlertReconcilerOptions) {
    this.#o = options;
    this.#quietMs = options.quietMs ?? DEFAULT_QUIET_MS;
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
    this.#now = options.now ?? Date.now;
  }

  async reconcile(check: string, target: string, reports: readonly Report[], request: ReconcileRequest = {}): Promise<ReconcileOutcome[]> {
    const observation = observeScan(check, target, reports);
    const lock = await this.#o.store.reconcileLock(check, target, LOCK_TTL_MS, this.#o.lockWaitMs ?? 60_000);
    if (!lock) throw new Error(`alert state for ${check} ${target} stayed locked; another worker may be stuck`);
    const outcomes: ReconcileOutcome[] = [];
    try {
      const now = this.#now();
      const silence = await this.#o.store.silenceFor(target, now);
      for (const seen of [observation.drift, observation.unchecked]) {
        outcomes.push(await this.#apply(observation, seen, now, silence, request));
      }
    } finally {
      await lock.release();
    }
    await this.#reportOpenAlerts();
    return outcomes;
  }

  readonly #checksReported = new Set<string>();

  async #reportOpenAlerts(): Promise<void> {
    if (!this.#o.metrics) return;
    const byCheck = new Map<string, number>([...this.#checksReported].map((check) => [check, 0]));
    for (const record of await this.#o.store.open()) byCheck.set(record.check, (byCheck.get(record.check) ?? 0) + 1);
    for (const [check, count] of byCheck) {
      this.#checksReported.add(check);
      this.#o.metrics.setOpenAlerts(check, count);
    }
  }

  async #apply(observation: ScanObservation, seen: KindObservation, now: number, silence: Silence | undefined, request: ReconcileRequest): Promise<ReconcileOutcome> {
    const { check, target } = observation;
    const id = alertIdOf(check, target, seen.kind);
    const prev = await this.#o.store.get(id);
    const t = transition(prev, seen, { check, target, now, quietMs: this.#quietMs, partial: observation.partial });
    const muted = silence !== undefined || !this.#o.channel;
    const outcome: ReconcileOutcome = { id, kind: seen.kind, event: t.event, posted: false, updated: false, threaded: false, muted };
    if (!t.record) return outcome;
    if (t.event === 'none' && !t.record.unsynced) return outcome;

    let record: AlertRecord = { ...t.record };
    const upToDate = t.event === 'unchanged' && !request.requested && !record.unsynced && shownLately(record, now, this.#refreshMs, silence);
    delete record.unsynced;
    const log = this.#o.log.child({ alert: id, check, target, kind: seen.kind, event: t.event });
    try {
      if (upToDate) {
        // The message says all there is but the time of this scan; a later scan refreshes it.
      } else if (record.ts && record.channel) {
        record = await this.#updateExisting(record, now, silence, outcome);
        const note = threadNote(t.event, t.change, record, now);
        if (note && !muted && record.ts && record.channel && !outcome.posted) {
          await this.#o.sender.post(record.channel, { text: note, threadTs: record.ts });
          outcome.threaded = true;
        }
      } else if (record.state === 'open' && !muted) {
        record = await this.#post(record, now, silence, outcome);
      }
    } catch (err) {
      record.unsynced = true;
      log.warn({ err: describeError(err) }, 'could not bring the alert message up to date; the next scan tries again');
    }
    await this.#o.store.save(record, this.#quietMs + 60_000);
    if (AUDITED_EVENTS.includes(t.event)) {
      await this.#o.audit?.record({ kind: 'alert', actor: request.actor ?? 'scheduler', action: check, target, subject: seen.kind, outcome: t.event, ...(record.channel ? { channel: record.channel } : {}) });
    }
    log.info({ posted: outcome.posted, updated: outcome.updated, threaded: outcome.threaded, muted }, 'alert reconciled');
    return outcome;
  }

  async #updateExisting(record: AlertRecord, now: number, silence: Silence | undefined, outcome: ReconcileOutcome): Promise<AlertRecord> {
    try {
      await this.#o.sender.update(record.channel!, record.ts!, renderAlert(record, now, silence));
      outcome.updated = true;
      return shown(record, now, silence);
    } catch (err) {
      // Someone deleted the message: an open alert gets a new one rather than none.
      if (slackErrorOf(err) !== 'message_not_found') throw err;
      const { ts: _ts, channel: _channel, ...rest } = record;
      if (rest.state !== 'open' || outcome.muted) return rest;
      return this.#post(rest, now, silence, outcome);
    }
  }

  /** The findings whole, in the new alert's thread; a failure is logged, the alert stands. */
  async #postEvidence(channel: string, ts: string, record: AlertRecord): Promise<void> {
    try {
      await postEvidenceReplies(this.#o.sender, channel, ts, alertEvidence(record));
    } catch (err) {
      this.#o.log.warn({ alert: record.id, err: describeError(err) }, "could not post the alert's evidence in its thread");
    }
  }

  async #post(record: AlertRecord, now: number, silence: Silence | undefined, outcome: ReconcileOutcome): Promise<AlertRecord> {
    const channel = this.#o.channel!;
    const { ts } = await this.#o.sender.post(channel, renderAlert(record, now, silence));
    outcome.posted = true;
    if (ts) await this.#postEvidence(channel, ts, record);
    return shown({ ...record, channel, ts }, now, silence);
  }
}

function shown(record: AlertRecord, now: number, silence: Silence | undefined): AlertRecord {
  const { shownSilenceUntil: _old, ...rest } = record;
  return { ...rest, shownAt: now, ...(silence ? { shownSilenceUntil: silence.until } : {}) };
}

/** Its message was edited less than `refreshMs` ago and shows the silence there is now. */
function shownLately(record: AlertRecord, now: number, refreshMs: number, silence: Silence | undefined): boolean {
  return now - (record.shownAt ?? 0) < refreshMs && record.shownSilenceUntil === silence?.until;
}

function slackErrorOf(err: unknown): string | undefined {
  const code = (err as { slackError?: unknown } | undefined)?.slackError;
  return typeof code === 'string' ? code : undefined;
}
