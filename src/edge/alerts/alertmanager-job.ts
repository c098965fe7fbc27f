import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describeError, UsageError } from '../../core/errors.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import type { Report } from '../../core/report.ts';
import type { JobContext, JobData, JobDefinition } from '../../engine/job-types.ts';
import type { Logger } from '../../core/log.ts';
import { renderAnswer } from '../slack/answer-render.ts';
import { renderEvidence } from '../slack/evidence-thread.ts';
import { evidenceChange, shownEvidenceOf, type EvidenceChange, type ShownEvidence } from './shown-evidence.ts';
import { clipText, codeSpan, inline } from '../slack/mrkdwn.ts';
import type { AlertMessage } from './alert-message.ts';
import type { AlertSender } from './alert-sender.ts';
import { postEvidenceReplies } from './evidence-replies.ts';
import type { AlertStore } from './alert-store.ts';
import { waitForLock, type HeldLock } from './redis-lock.ts';
import { SCAN_CHECKS } from './scan-checks.ts';
import { registeredCheckJob, runCheck } from './scan-job.ts';

export const ALERTMANAGER_JOB = 'alertmanager';

/** What POST /alertmanager queues: one routed check of one group, names and fingerprints only. */
export interface AlertmanagerJobData extends JobData {
  groupKey: string;
  status: 'firing' | 'resolved';
  check: string;
  alerts: { alertname: string; fingerprint: string; status: 'firing' | 'resolved' }[];
}

/** Where the group's message is: its own post, or a reply in the thread of the bot's open alert. */
interface GroupMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  /** The evidence its thread shows, by finding; absent when the same check's alert thread holds it. */
  shown?: ShownEvidence;
}

/** The answer posted, and the report whose evidence its thread still needs (saved first, posted after). */
interface Placement {
  placed: GroupMessage;
  evidence?: Report;
}

export interface AlertmanagerJobDeps {
  store: AlertStore;
  sender: AlertSender;
  /** config.slack.alertChannel; without it the verdict is only logged. */
  channel: string | undefined;
  redact: Redactor;
  findJob?: (name: string) => JobDefinition | undefined;
}

const GROUP_TTL_S = 7 * 24 * 3600;

/**
 * `alertmanager`: answers one Alertmanager group with the read-only check its route names. A
 * firing group gets one message in the alert channel (a reply in the thread of the bot's own open
 * alert for that target, when there is one), updated each time the group comes again (with a thread
 * reply and the new evidence when the check's findings changed); a resolved
 * group is said in that thread. Never a repair.
 */
export function createAlertmanagerJob(deps: AlertmanagerJobDeps): JobDefinition<AlertmanagerJobData> {
  const find = deps.findJob ?? registeredCheckJob;
  return {
    name: ALERTMANAGER_JOB,
    run: async (ctx, data) => {
      const definition = find(data.check);
      if (!definition) throw new UsageError(`no check "${data.check}" is registered`, 'Fix alertmanager.routes: check names a check (dns-check, resolver-check, mac-diff, dhcp-check)');
      const key = groupKeyOf(deps.store, data);
      const log = ctx.log.child({ component: 'alertmanager', groupKey: data.groupKey, check: data.check, target: data.target, status: data.status });
      // One job of a group at a time: a group that changes while its first answer is being posted
      // updates that answer once it is saved, rather than posting a second one.
      const lock = await waitForLock(deps.store.redis, `${key}:lock`, GROUP_LOCK_TTL_MS, GROUP_LOCK_WAIT_MS);
      try {
        return await answerGroup(deps, ctx, data, definition, key, log);
      } finally {
        await lock?.release();
      }
    },
  };
}

const GROUP_LOCK_TTL_MS = 30_000;
const GROUP_LOCK_WAIT_MS = 120_000;

async function answerGroup(deps: AlertmanagerJobDeps, ctx: JobContext, data: AlertmanagerJobData, definition: JobDefinition, key: string, log: Logger): Promise<Report[]> {
  const known = await readGroup(deps.store.redis, key);
  if (data.status === 'resolved') {
    if (known) {
      await deps.sender.post(known.channel, { text: resolvedLine(data), threadTs: known.threadTs ?? known.ts });
      await deps.store.redis.del(key);
    }
    log.info({ told: Boolean(known) }, 'alertmanager group resolved');
    return [];
  }
  const reports = redactDeep(await runCheck(ctx, definition, data.check, data.target), deps.redact);
  if (!deps.channel) {
    log.warn({ verdict: reports[0]?.verdict }, 'alertmanager group checked; slack.alertChannel is not set, so nothing is posted');
    return reports;
  }
  if (known) {
    await deps.sender.update(known.channel, known.ts, renderGroupAnswer(data, reports));
    const shown = known.shown && reports[0] ? await postChangedEvidence(deps, known, known.shown, reports[0], log) : known.shown;
    if (shown !== known.shown) await deps.store.redis.set(key, JSON.stringify({ ...known, shown }), 'EX', GROUP_TTL_S);
  } else {
    const { placed, evidence } = await place(deps, data, reports);
    await deps.store.redis.set(key, JSON.stringify(placed), 'EX', GROUP_TTL_S);
    if (evidence) await postEvidence(deps, placed.channel, placed.threadTs ?? placed.ts, evidence, log);
  }
  log.info({ updated: Boolean(known), verdict: reports[0]?.verdict }, 'alertmanager group answered');
  return reports;
}

const PLACE_LOCK_TTL_MS = 30_000;
const PLACE_LOCK_WAIT_MS = 30_000;

/**
 * A reply in the thread of the bot's own open alert for the target (same check first, else any
 * other check's: the on-call engineer reads one incident per target), else a post of its own.
 * It holds the alert reconcile lock of every check that can raise an alert on that target while
 * it looks: a scan that is posting its alert (the message, then its evidence) saves the message's
 * ts only at the end, and an answer placed in between would miss that thread and post a second
 * top-level message. The locks are taken in one order (by name), so two answers never deadlock;
 * a reconcile holds only one of them at a time.
 */
async function place(deps: AlertmanagerJobDeps, data: AlertmanagerJobData, reports: readonly Report[]): Promise<Placement> {
  const locks: HeldLock[] = [];
  try {
    for (const check of alertingChecks(data.check)) {
      const lock = await deps.store.reconcileLock(check, data.target, PLACE_LOCK_TTL_MS, PLACE_LOCK_WAIT_MS);
      if (lock) locks.push(lock);
    }
    return await placeUnderLock(deps, data, reports);
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

/** The checks whose alerts an answer may go under: every scanned check, and the route's own. */
function alertingChecks(routeCheck: string): string[] {
  return [...new Set([routeCheck, ...Object.keys(SCAN_CHECKS)])].sort();
}

/**
 * The answer is held to a channel answer's shape (the verdict, one line per finding, the next
 * step); its evidence follows in the thread, unless it sits under the same check's alert, whose
 * thread holds that evidence already.
 */
async function placeUnderLock(deps: AlertmanagerJobDeps, data: AlertmanagerJobData, reports: readonly Report[]): Promise<Placement> {
  const open = (await deps.store.open()).filter((r) => r.target === data.target && r.channel && r.ts);
  const alert = open.find((r) => r.check === data.check) ?? open[0];
  const sameCheck = alert?.check === data.check;
  const message = renderGroupAnswer(data, reports, sameCheck ? "the evidence is in this alert's thread" : undefined);
  const placed: GroupMessage =
    alert?.channel && alert.ts
      ? { channel: alert.channel, ts: (await deps.sender.post(alert.channel, { ...message, threadTs: alert.ts })).ts, threadTs: alert.ts }
      : { channel: deps.channel as string, ts: (await deps.sender.post(deps.channel as string, message)).ts };
  const report = reports[0];
  if (sameCheck || !report) return { placed };
  return { placed: { ...placed, shown: shownEvidenceOf(report) }, ...(report.findings.length ? { evidence: report } : {}) };
}

/**
 * The group came again and its check found something else: the thread gets one reply saying what
 * changed (its first line), then the new evidence whole. Unchanged evidence posts nothing, so a
 * group's reruns (already bounded by its window) never flood the thread. Returns what is shown now.
 */
async function postChangedEvidence(deps: AlertmanagerJobDeps, known: GroupMessage, before: ShownEvidence, report: Report, log: Logger): Promise<ShownEvidence> {
  const now = shownEvidenceOf(report);
  const change = evidenceChange(before, now);
  if (!change) return before;
  const threadTs = known.threadTs ?? known.ts;
  await deps.sender.post(known.channel, { text: changeLine(change, report), threadTs });
  if (report.findings.length) await postEvidence(deps, known.channel, threadTs, report, log);
  return now;
}

/** Every finding whole, in the answer's thread; a failure is logged, the answer stands. */
async function postEvidence(deps: AlertmanagerJobDeps, channel: string, threadTs: string, report: Report, log: Logger): Promise<void> {
  try {
    await postEvidenceReplies(deps.sender, channel, threadTs, renderEvidence(report));
  } catch (err) {
    log.warn({ err: describeError(err) }, "could not post the evidence of an Alertmanager answer in its thread");
  }
}

function changeLine(change: EvidenceChange, report: Report): string {
  const parts = [
    change.added.length ? `${change.added.length} new (${change.added.join(', ')})` : '',
    change.changed.length ? `${change.changed.length} with new evidence (${change.changed.join(', ')})` : '',
    change.gone.length ? `${change.gone.length} gone (${change.gone.join(', ')})` : '',
  ].filter(Boolean);
  const findings = parts.length ? `; findings: ${parts.join('; ')}` : '';
  const tail = report.findings.length ? ' The new evidence follows.' : '';
  return clipText(`:arrows_counterclockwise: Evidence changed since the last answer: ${inline(report.verdict)}${inline(findings)}.${tail}`, 2900);
}

function groupKeyOf(store: AlertStore, data: AlertmanagerJobData): string {
  const digest = createHash('sha256').update(data.groupKey).update('\0').update(data.check).update('\0').update(data.target).digest('hex').slice(0, 24);
  return `${store.prefix}:alertmanager:group:${digest}`;
}

async function readGroup(redis: Redis, key: string): Promise<GroupMessage | undefined> {
  const raw = await redis.get(key);
  return raw ? (JSON.parse(raw) as GroupMessage) : undefined;
}

function names(data: AlertmanagerJobData): string {
  return [...new Set(data.alerts.map((a) => a.alertname || '(no alertname)'))].join(', ');
}

function renderGroupAnswer(data: AlertmanagerJobData, reports: readonly Report[], evidenceNote?: string): AlertMessage {
  const [report] = reports;
  const firing = data.alerts.filter((a) => a.status === 'firing').length;
  const intro = `*Alertmanager:* ${inline(names(data))} · ${firing} firing · answered with ${codeSpan(`${data.check} ${data.target}`)} (group ${codeSpan(data.groupKey, 120)})`;
  const body = report ? renderAnswer(report, evidenceNote ? { evidenceNote } : {}).blocks : [];
  const verdict = report?.verdict ?? 'no result';
  return {
    text: clipText(inline(`Alertmanager ${names(data)}: ${data.check} ${data.target} says ${verdict}`), 3000),
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: clipText(intro, 3000) } }, ...body],
  };
}

function resolvedLine(data: AlertmanagerJobData): string {
  return clipText(`:white_check_mark: Alertmanager resolved ${inline(names(data))} (group ${codeSpan(data.groupKey, 120)}).`, 2900);
}

