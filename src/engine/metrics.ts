import { withTimeout } from '../core/with-timeout.ts';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MaasRequestInfo } from '../adapters/maas/client.ts';
import { peerOutcomeOfError, peerOutcomeOfStatus, type Peer, type PeerOutcome } from '../core/peer-outcome.ts';

export { peerOutcomeOfError, peerOutcomeOfStatus, type Peer, type PeerOutcome } from '../core/peer-outcome.ts';
import type { Status, StepOutcome } from '../core/report.ts';

/*
 * Prometheus metrics. Every label value goes through a bounded set: a target, a user id or a
 * MAC never becomes a label, and an unexpected value becomes `other`, so a typo in
 * `/maas fxi-dns` cannot mint a new series. The metric names are listed in docs/operations.md.
 */

export const METRIC_PREFIX = 'maas_chatops_';

/** accepted: queued; answered: replied inline (help, sites); usage, denied, error. */
export type CommandOutcome = 'accepted' | 'answered' | 'usage' | 'denied' | 'error';
/** A report's status, or `failed` when the job threw (after its last attempt). */
export type JobOutcome = Status | 'failed';
/** A whole repair plan: applied (every step verified or skipped), failed, refused by a guard, rejected, expired. */
export type RepairOutcome = 'applied' | 'failed' | 'refused' | 'rejected' | 'expired';
/** The Slack Web API error classes of @slack/web-api's ErrorCode. */
export type SlackErrorKind = 'platform' | 'http' | 'request' | 'rate_limited' | 'other';

const COMMAND_OUTCOMES: readonly CommandOutcome[] = ['accepted', 'answered', 'usage', 'denied', 'error'];
const JOB_OUTCOMES: readonly JobOutcome[] = ['ok', 'warning', 'critical', 'error', 'failed'];
const PEERS: readonly Peer[] = ['maas', 'ssh', 'kube'];
const PEER_OUTCOMES: readonly PeerOutcome[] = ['ok', 'client_error', 'server_error', 'timeout', 'error'];
const REPAIR_OUTCOMES: readonly RepairOutcome[] = ['applied', 'failed', 'refused', 'rejected', 'expired'];
const STEP_OUTCOMES: readonly StepOutcome[] = ['verified', 'skipped', 'refused', 'failed'];
const SLACK_ERROR_KINDS: readonly SlackErrorKind[] = ['platform', 'http', 'request', 'rate_limited', 'other'];
const SLACK_FALLBACK_REASONS = ['invalid_blocks', 'invalid_blocks_format', 'msg_blocks_too_long', 'msg_too_long', 'invalid_attachments'] as const;
/** Why a result went out beside its running answer instead of over it. */
const SLACK_SECOND_MESSAGE_REASONS = ['running_answer_unknown', 'cant_update_message', 'message_not_found', 'edit_failed'] as const;
const SLACK_REFUSAL_REASONS = ['too_large', 'future_timestamp', 'replay', 'unreadable_payload'] as const;
/** Slack Web API method names look like `chat.postMessage`; the bot calls a handful. */
const SLACK_METHOD_RE = /^[a-z]+(\.[A-Za-z]+){1,2}$/;
const MAX_SLACK_METHODS = 30;

/** Queue name → jobs waiting to run (waiting + delayed + prioritized), read when /metrics is scraped. */
export type QueueDepthSupplier = () => Promise<Record<string, number>>;

export interface MetricsOptions {
  /** Subcommand label values; others count as `other`. The composition root passes the registry's COMMAND_NAMES; none by default. */
  commandNames?: readonly string[];
  /** Job and alert kind label values; others count as `other`. The composition root passes the registry's JOB_KINDS; none by default. */
  jobKinds?: readonly string[];
  queueDepths?: QueueDepthSupplier;
  /** How long a scrape waits for queue depths before it leaves them out. Default 2000 ms. */
  queueDepthTimeoutMs?: number;
  /** Process metrics (CPU, memory, event loop lag) with the same prefix. Default true. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  /** A dedicated registry, not prom-client's global one. */
  readonly registry: Registry;
  readonly commands: Counter<'subcommand' | 'outcome'>;
  readonly jobs: Counter<'kind' | 'outcome'>;
  readonly jobDuration: Histogram<'kind' | 'outcome'>;
  readonly queueDepth: Gauge<'queue'>;
  readonly queueDepthErrors: Counter;
  readonly openAlerts: Gauge<'kind'>;
  readonly peerRequests: Counter<'peer' | 'outcome'>;
  readonly peerDuration: Histogram<'peer' | 'outcome'>;
  readonly repairs: Counter<'kind' | 'outcome'>;
  readonly repairSteps: Counter<'kind' | 'outcome'>;
  readonly slackApiErrors: Counter<'method' | 'kind'>;
  readonly slackRateLimited: Counter<'method'>;
  readonly slackFallbacks: Counter<'reason'>;
  readonly slackRequestsRefused: Counter<'reason'>;

  recordCommand(subcommand: string, outcome: CommandOutcome): void;
  observeJob(kind: string, outcome: JobOutcome, seconds: number): void;
  /** Runs `fn`, counting it and timing it as one request to `peer`; a throw counts as `classify(err)`. */
  timePeer<T>(peer: Peer, fn: () => Promise<T>, classify?: (err: unknown) => PeerOutcome): Promise<T>;
  observePeer(peer: Peer, outcome: PeerOutcome, seconds: number): void;
  /** Fits MaasClientOptions.onRequest: one call per attempt. */
  observeMaasRequest(info: MaasRequestInfo): void;
  setOpenAlerts(kind: string, count: number): void;
  recordRepair(kind: string, outcome: RepairOutcome): void;
  recordRepairStep(kind: string, outcome: StepOutcome): void;
  /** Counts a failed Slack Web API call; classifies @slack/web-api errors by their `code`. */
  recordSlackError(method: string, err: unknown): void;
  /** For WebClient's `rate_limited` event (a method name or the request URL): one 429 from Slack, which the client retries. */
  recordSlackRateLimited(method: string): void;
  /** A message Slack refused for its content (invalid_blocks…), replaced by a short plain fallback. */
  recordSlackFallback(reason: string): void;
  /** A command's result posted as a new message while its running answer may still show (two messages), by why. */
  recordSlackSecondMessage(reason: string): void;
  /** Failing targets of an `all` run whose details had no thread to go in (the bot may not post in the channel). */
  recordSlackDetailsWithheld(targets: number): void;
  /** A request from Slack's side refused or dropped before any listener ran (too large, a replay, a payload naming no user…). */
  recordSlackRequestRefused(reason: string): void;
  /** Set or replace where queue depths come from (queues are often made after the metrics). */
  setQueueDepthSupplier(supplier: QueueDepthSupplier | undefined): void;
  /** The exposition text, as /metrics serves it. */
  text(): Promise<string>;
  readonly contentType: string;
}

/** A label value from a fixed set, else `other`. */
export function boundedLabel<T extends string>(allowed: readonly T[], value: string): T | 'other' {
  return (allowed as readonly string[]).includes(value) ? (value as T) : 'other';
}

/** Label values admitted on first sight up to a cap, then `other`: for sets our own code bounds. */
function cappedLabels(max: number, shape: RegExp): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (!shape.test(value)) return 'other';
    if (seen.has(value)) return value;
    if (seen.size >= max) return 'other';
    seen.add(value);
    return value;
  };
}

export function slackErrorKind(err: unknown): SlackErrorKind {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  switch (code) {
    case 'slack_webapi_platform_error':
      return 'platform';
    case 'slack_webapi_http_error':
      return 'http';
    case 'slack_webapi_request_error':
      return 'request';
    case 'slack_webapi_rate_limited_error':
      return 'rate_limited';
    default:
      return 'other';
  }
}

const JOB_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const PEER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const commandNames = options.commandNames ?? [];
  const jobKinds = options.jobKinds ?? [];
  const cappedMethod = cappedLabels(MAX_SLACK_METHODS, SLACK_METHOD_RE);
  // WebClient's rate_limited event gives the full URL (…/api/chat.postMessage): keep the method.
  const slackMethod = (method: string) => cappedMethod(method.slice(method.lastIndexOf('/') + 1));
  const depthTimeoutMs = options.queueDepthTimeoutMs ?? 2_000;
  let supplier = options.queueDepths;
  let depthRead: Promise<void> = Promise.resolve();

  const commands = new Counter({
    name: `${METRIC_PREFIX}commands_total`,
    help: '/maas commands received, by subcommand and outcome',
    labelNames: ['subcommand', 'outcome'] as const,
    registers,
  });
  const jobs = new Counter({
    name: `${METRIC_PREFIX}jobs_total`,
    help: 'Jobs finished, by kind and outcome (the report status, or failed)',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const jobDuration = new Histogram({
    name: `${METRIC_PREFIX}job_duration_seconds`,
    help: 'How long a job ran, by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  const queueDepth = new Gauge({
    name: `${METRIC_PREFIX}queue_depth`,
    help: 'Jobs waiting to run (waiting + delayed + prioritized), by queue, read at scrape time',
    labelNames: ['queue'] as const,
    registers,
    collect() {
      this.reset();
      const read = supplier;
      if (!read) return;
      depthRead = withTimeout(Promise.resolve().then(read), depthTimeoutMs).then(
        (depths) => {
          for (const [queue, depth] of Object.entries(depths)) this.set({ queue }, depth);
        },
        // Stale numbers would lie; an absent series and the error counter tell the truth.
        () => void queueDepthErrors.inc(),
      );
      return depthRead;
    },
  });
  const queueDepthErrors = new Counter({
    name: `${METRIC_PREFIX}queue_depth_errors_total`,
    help: 'Scrapes whose queue depths could not be read (Redis down or slow)',
    registers,
    // Registered after the gauge, so a scrape reports the failure of its own read.
    collect: () => depthRead,
  });
  const openAlerts = new Gauge({
    name: `${METRIC_PREFIX}open_alerts`,
    help: 'Drift alerts currently open, by kind',
    labelNames: ['kind'] as const,
    registers,
  });
  const peerRequests = new Counter({
    name: `${METRIC_PREFIX}peer_requests_total`,
    help: 'Requests to MAAS, SSH hosts and the Kubernetes API, by peer and outcome (errors: outcome != "ok")',
    labelNames: ['peer', 'outcome'] as const,
    registers,
  });
  const peerDuration = new Histogram({
    name: `${METRIC_PREFIX}peer_request_duration_seconds`,
    help: 'Latency of requests to MAAS, SSH hosts and the Kubernetes API, by peer and outcome',
    labelNames: ['peer', 'outcome'] as const,
    buckets: PEER_BUCKETS,
    registers,
  });
  const repairs = new Counter({
    name: `${METRIC_PREFIX}repairs_total`,
    help: 'Repair plans that ended, by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const repairSteps = new Counter({
    name: `${METRIC_PREFIX}repair_steps_total`,
    help: 'Repair steps executed, by kind and outcome (verified, skipped, refused, failed)',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const slackApiErrors = new Counter({
    name: `${METRIC_PREFIX}slack_api_errors_total`,
    help: 'Slack Web API calls that failed, by method and error kind',
    labelNames: ['method', 'kind'] as const,
    registers,
  });
  const slackRateLimited = new Counter({
    name: `${METRIC_PREFIX}slack_rate_limited_total`,
    help: 'HTTP 429 answers from the Slack Web API, by method',
    labelNames: ['method'] as const,
    registers,
  });
  const slackFallbacks = new Counter({
    name: `${METRIC_PREFIX}slack_fallbacks_total`,
    help: 'Messages Slack refused for their content and replaced by a short plain fallback, by Slack error',
    labelNames: ['reason'] as const,
    registers,
  });
  const slackSecondMessages = new Counter({
    name: `${METRIC_PREFIX}slack_second_messages_total`,
    help: "Commands' results posted as a new message while the running answer may still show, by reason",
    labelNames: ['reason'] as const,
    registers,
  });
  const slackDetailsWithheld = new Counter({
    name: `${METRIC_PREFIX}slack_details_withheld_total`,
    help: 'Failing targets of an all run whose details were not posted: no thread (the bot may not post in the channel); the answer points to the CLI',
    registers,
  });
  const slackRequestsRefused = new Counter({
    name: `${METRIC_PREFIX}slack_requests_refused_total`,
    help: 'Requests to /slack/events (or Socket Mode payloads) refused or dropped before any listener ran, by reason',
    labelNames: ['reason'] as const,
    registers,
  });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  const kind = (k: string) => boundedLabel(jobKinds, k);
  const observePeer = (peer: Peer, outcome: PeerOutcome, seconds: number) => {
    const labels = { peer: boundedLabel(PEERS, peer), outcome: boundedLabel(PEER_OUTCOMES, outcome) };
    peerRequests.inc(labels);
    peerDuration.observe(labels, seconds);
  };

  return {
    registry,
    commands,
    jobs,
    jobDuration,
    queueDepth,
    queueDepthErrors,
    openAlerts,
    peerRequests,
    peerDuration,
    repairs,
    repairSteps,
    slackApiErrors,
    slackRateLimited,
    slackFallbacks,
    slackRequestsRefused,
    contentType: registry.contentType,
    recordCommand(subcommand, outcome) {
      commands.inc({ subcommand: boundedLabel(commandNames, subcommand), outcome: boundedLabel(COMMAND_OUTCOMES, outcome) });
    },
    observeJob(jobKind, outcome, seconds) {
      const labels = { kind: kind(jobKind), outcome: boundedLabel(JOB_OUTCOMES, outcome) };
      jobs.inc(labels);
      jobDuration.observe(labels, seconds);
    },
    async timePeer(peer, fn, classify = peerOutcomeOfError) {
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const value = await fn();
        observePeer(peer, 'ok', seconds());
        return value;
      } catch (err) {
        observePeer(peer, classify(err), seconds());
        throw err;
      }
    },
    observePeer,
    observeMaasRequest(info) {
      observePeer('maas', peerOutcomeOfStatus(info.status), info.ms / 1000);
    },
    setOpenAlerts(alertKind, count) {
      openAlerts.set({ kind: kind(alertKind) }, count);
    },
    recordRepair(repairKind, outcome) {
      repairs.inc({ kind: kind(repairKind), outcome: boundedLabel(REPAIR_OUTCOMES, outcome) });
    },
    recordRepairStep(repairKind, outcome) {
      repairSteps.inc({ kind: kind(repairKind), outcome: boundedLabel(STEP_OUTCOMES, outcome) });
    },
    recordSlackError(method, err) {
      const errorKind = boundedLabel(SLACK_ERROR_KINDS, slackErrorKind(err));
      slackApiErrors.inc({ method: slackMethod(method), kind: errorKind });
    },
    recordSlackRateLimited(method) {
      slackRateLimited.inc({ method: slackMethod(method) });
    },
    recordSlackFallback(reason) {
      slackFallbacks.inc({ reason: boundedLabel(SLACK_FALLBACK_REASONS, reason) });
    },
    recordSlackSecondMessage(reason) {
      slackSecondMessages.inc({ reason: boundedLabel(SLACK_SECOND_MESSAGE_REASONS, reason) });
    },
    recordSlackDetailsWithheld(targets) {
      slackDetailsWithheld.inc(targets);
    },
    recordSlackRequestRefused(reason) {
      slackRequestsRefused.inc({ reason: boundedLabel(SLACK_REFUSAL_REASONS, reason) });
    },
    setQueueDepthSupplier(next) {
      supplier = next;
    },
    text: () => registry.metrics(),
  };
}

/** Reads BullMQ queues' depths for the queue_depth gauge (only `getJobCounts` is used). */
type DepthQueue = { name: string; getJobCounts(...types: string[]): Promise<Record<string, number>> };

/** Queue depths at scrape time; pass a function when the queue objects can be replaced (after a Redis outage). */
export function bullmqDepthSupplier(queues: readonly DepthQueue[] | (() => readonly DepthQueue[])): QueueDepthSupplier {
  return async () => {
    const current = typeof queues === 'function' ? queues() : queues;
    const entries = await Promise.all(
      current.map(async (q) => {
        const counts = await q.getJobCounts('waiting', 'delayed', 'prioritized');
        return [q.name, (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0)] as const;
      }),
    );
    return Object.fromEntries(entries);
  };
}

