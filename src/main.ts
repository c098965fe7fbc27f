import type { Redis } from 'ioredis';
import { commandRouter } from '../commands/dispatch.ts';
import { commandList } from '../commands/index.ts';
import { workerJobs } from '../jobs/index.ts';
import type { JobData } from './engine/job-types.ts';
import type { Adapters } from './adapters/adapters.ts';
import { auditKey, createAuditLog, type AuditLog } from './engine/audit/audit-log.ts';
import { secretValues, type LoadedConfig } from './core/config.ts';
import { envSecrets, readRuntimeEnv, requireSlackEnv, type RuntimeEnv } from './core/env.ts';
import { ChatopsError, describeError, isConfigOrUsageError } from './core/errors.ts';
import { healthRoutes, metricsHandler, startHealthServer, type Route } from './edge/http/health.ts';
import { createLogger, type Logger } from './core/log.ts';
import { bullmqDepthSupplier, createMetrics, type Metrics } from './engine/metrics.ts';
import { dashboardRoutesFromEnv } from './edge/http/queue-dashboard.ts';
import { DEDUPLICATED_JOBS } from './features/registry.ts';
import { JobQueues } from './engine/queue/job-queues.ts';
import { startJobWorkers } from './engine/queue/job-workers.ts';
import { DEFAULT_PREFIX } from './engine/queue/queue-names.ts';
import { createRedis, isSentinel, pingRedis } from './engine/queue/redis-connection.ts';
import { describeRedis, redisSecrets, redisSettingsFrom } from './engine/queue/redis-settings.ts';
import { configNames, createRedactor, type Redactor } from './core/redact.ts';
import { createSlackApp, type SlackApp } from './edge/slack/app.ts';
import { alertActionHandlers } from './edge/slack/alert-actions.ts';
import { approvalHandlers } from './edge/slack/approvals.ts';
import { metricsOutcome } from './edge/slack/command-result.ts';
import { commandName } from './edge/slack/invocation.ts';
import { redisAnswerBoard } from './edge/slack/answer-board.ts';
import { CHANNEL_INTERVAL_MS, redisPacer } from './edge/slack/channel-pacer.ts';
import { createSlackGateway, type SlackGateway } from './edge/slack/gateway.ts';
import { createPlanStore, type PlanStore } from './engine/repair/plan-store.ts';
import { AlertStore } from './edge/alerts/alert-store.ts';
import { startAlerting } from './edge/alerts/start-alerting.ts';
import type { ClusterWatches } from './edge/alerts/cluster-watch.ts';
import { startWatchScans, watchDetail } from './edge/alerts/watch-scans.ts';
import { startVmHostWatchScans, vmHostWatchDetail } from './edge/alerts/vm-host-watch-scans.ts';
import type { VmHostWatches } from './edge/alerts/vm-host-watch.ts';
import { alertmanagerRoute } from './edge/http/alertmanager-endpoint.ts';
import { registerAlertmanagerMetrics } from './engine/alertmanager-metrics.ts';
import { mayRunRepairs } from './edge/slack/command-policy.ts';
import { createSlackNotifier } from './edge/slack/notifier.ts';
import { withTimeout } from './core/with-timeout.ts';

export type Role = 'serve' | 'bot' | 'worker';

export interface RuntimeOptions {
  role: Role;
  loaded: LoadedConfig;
  env: NodeJS.ProcessEnv;
  /** Injected by tests and the lab; production builds the real ones. */
  adapters?: Adapters;
  /** BullMQ key prefix; tests use a fresh one each. */
  prefix?: string;
  log?: Logger;
  /** Address to listen on; default HOST (0.0.0.0). */
  host?: string;
}

export interface Runtime {
  port: number | undefined;
  log: Logger;
  /** The /metrics listener's port when METRICS_PORT moved it off PORT. */
  metricsPort?: number;
  redact: Redactor;
  metrics: Metrics;
  queues: JobQueues;
  /** The audit trail (Redis stream + log): what records plans, approvals, repair steps and alerts takes this. */
  audit: AuditLog;
  close(): Promise<void>;
}

interface Wiring {
  options: RuntimeOptions;
  env: RuntimeEnv;
  /** The listen address: the caller's, else HOST. */
  host: string;
  redact: Redactor;
  log: Logger;
  prefix: string;
  redis: Redis;
  producer: Redis;
  queues: JobQueues;
  metrics: Metrics;
  audit: AuditLog;
  plans: PlanStore;
  /** The process's one way to Slack (its only WebClient), when a bot token is set. */
  slack: SlackGateway | undefined;
  /** The management-cluster watch of a worker process, for /readyz. */
  watches?: ClusterWatches;
  vmHostWatches?: VmHostWatches;
  closers: (() => Promise<void>)[];
}

async function buildAdapters(w: Wiring): Promise<Adapters> {
  if (w.options.adapters) return w.options.adapters;
  const { createRealAdapters } = await import('./adapters/real-adapters.ts');
  return createRealAdapters(w.options.loaded.config, {
    onMaasRequest: (info) => w.metrics.observeMaasRequest(info),
    onPeerRequest: (peer, outcome, ms) => w.metrics.observePeer(peer, outcome, ms / 1000),
    maasMaxBodyBytes: w.env.maasMaxBodyBytes,
  });
}

function routesFor(w: Wiring, slackReady: (() => boolean) | undefined): Route[] {
  const queueList = () => [...workerJobs.keys()].map((name) => w.queues.queue(name));
  return [
    ...healthRoutes({
      // Both connections: the producer reconnects on its own schedule, and the bot enqueues through it.
      checks: { redis: async () => (await pingRedis(w.redis)) && (await pingRedis(w.producer)), config: () => true, ...(slackReady ? { slack: slackReady } : {}) },
      // With METRICS_PORT, /metrics leaves the Slack-facing listener for its own.
      ...(w.env.metricsPort === undefined ? { registry: w.metrics.registry } : {}),
      detail: () => mergedDetail(watchDetail(w.watches), vmHostWatchDetail(w.vmHostWatches)),
    }),
    ...dashboardRoutesFromEnv(w.options.env, { queues: queueList, redact: w.redact, audit: w.audit }),
    // The bot's listener only (slackReady is set for the bot), in both Slack modes.
    ...(slackReady ? alertmanagerRoutes(w) : []),
  ];
}

/** POST /alertmanager, when ALERTMANAGER_TOKEN is set. */
function alertmanagerRoutes(w: Wiring): Route[] {
  const token = w.env.alertmanagerToken;
  if (!token) return [];
  const count = registerAlertmanagerMetrics(w.metrics.registry);
  return [alertmanagerRoute({ token, config: w.options.loaded.config, enqueue: (name, data, options) => w.queues.enqueue(name, data, options), log: w.log, count })];
}

async function startWorkers(w: Wiring): Promise<void> {
  const adapters = await buildAdapters(w);
  const notifier = w.slack ? createSlackNotifier({ gateway: w.slack, log: w.log, mayRepair: (user) => mayRunRepairs(w.options.loaded.config.slack, user), onSecondMessage: (reason) => w.metrics.recordSlackSecondMessage(reason), onDetailsWithheld: (targets) => w.metrics.recordSlackDetailsWithheld(targets) }) : undefined;
  if (!notifier) w.log.warn('SLACK_BOT_TOKEN is not set: results are not posted to Slack');
  const workers = startJobWorkers({
    connection: w.redis,
    jobs: workerJobs,
    context: { config: w.options.loaded.config, adapters, log: w.log, plans: w.plans, audit: w.audit, metrics: w.metrics, ...(notifier ? { notifier } : {}) },
    ...(notifier ? { notifier } : {}),
    redact: w.redact,
    prefix: w.prefix,
    onJobDone: (name, outcome, seconds) => w.metrics.observeJob(name, outcome, seconds),
  });
  w.closers.push(() => workers.close());
  const sender = w.slack;
  const stopping = new AbortController();
  // Not awaited: syncing the schedulers waits for Redis, and a process started while Redis is down must still come up (and say so on /readyz).
  const alerting = startAlerting({ connection: w.redis, prefix: w.prefix, config: w.options.loaded.config, adapters, ...(sender ? { sender } : {}), log: w.log, redact: w.redact, audit: w.audit, metrics: w.metrics, signal: stopping.signal }).catch((err: unknown) => {
    if (!stopping.signal.aborted) w.log.error({ err: describeError(err) }, 'drift alerting could not start');
    return undefined;
  });
  w.closers.push(async () => {
    // A start still waiting for Redis gives up (and closes its scan worker) rather than hold the shutdown.
    stopping.abort();
    await (await alerting)?.close();
  });
  w.watches = startWatchScans({ config: w.options.loaded.config, adapters, enqueue: (name, data, options) => w.queues.enqueue(name, data, options), registry: w.metrics.registry, log: w.log });
  const watches = w.watches;
  if (watches) w.closers.unshift(() => watches.close());
  w.vmHostWatches = startVmHostWatchScans({ config: w.options.loaded.config, adapters, enqueue: (name, data, options) => w.queues.enqueue(name, data, options), registry: w.metrics.registry, log: w.log });
  const vmHostWatches = w.vmHostWatches;
  if (vmHostWatches) w.closers.unshift(() => vmHostWatches.close());
}

function mergedDetail(...parts: (Record<string, unknown> | undefined)[]): Record<string, unknown> | undefined {
  const present = parts.filter((p) => p !== undefined);
  return present.length ? Object.assign({}, ...present) as Record<string, unknown> : undefined;
}

async function startBot(w: Wiring): Promise<number | undefined> {
  const { botToken } = requireSlackEnv(w.env);
  let connected = false;
  // Socket Mode: Slack sends nothing over HTTP, so the routes get a listener of our own (the same
  // one the worker uses, which serves a subtree such as the queue dashboard's); HTTP mode: Bolt's.
  const probesPort = w.env.mode === 'socket' ? await startProbes(w, () => connected) : undefined;
  const alerts = new AlertStore(w.redis, w.prefix);
  const enqueue = (name: string, data: JobData) => w.queues.enqueue(name, data);
  const { config } = w.options.loaded;
  const slack: SlackApp = await createSlackApp({
    config,
    botToken,
    ...(w.env.signingSecret ? { signingSecret: w.env.signingSecret } : {}),
    ...(w.env.appToken ? { appToken: w.env.appToken } : {}),
    mode: w.env.mode,
    port: w.env.port,
    host: w.host,
    ...(w.env.slackApiUrl ? { slackApiUrl: w.env.slackApiUrl } : {}),
    commands: commandRouter,
    enqueue,
    submit: (name, data) => w.queues.submit(name, data),
    log: w.log,
    ...(w.slack ? { gateway: w.slack } : {}),
    redact: w.redact,
    customRoutes: probesPort === undefined ? routesFor(w, () => connected) : [],
    onCommand: (invocation, result) => w.metrics.recordCommand(commandName(invocation), metricsOutcome(result)),
    onSlackFallback: (reason) => w.metrics.recordSlackFallback(reason),
    onRequestRefused: (reason) => w.metrics.recordSlackRequestRefused(reason),
    metrics: w.metrics,
    audit: w.audit,
    alerts,
    rememberSignature: async (signature, ttlSec) => {
      // Not queued behind a reconnect: with Redis away the check is skipped at once (request-guard.ts).
      if (w.producer.status !== 'ready') throw new Error('Redis is not connected');
      return (await withTimeout(w.producer.set(`${w.prefix}:slack-seen:${signature}`, '1', 'EX', ttlSec, 'NX'), 2_000)) === 'OK';
    },
    registerExtras: (app, slack) => {
      approvalHandlers({ config, plans: w.plans, enqueue: (name, data, options) => w.queues.enqueue(name, data, options), log: w.log, audit: w.audit, metrics: w.metrics })(app, slack);
      alertActionHandlers({ config, commands: commandRouter, enqueue, log: w.log, audit: w.audit, alerts })(app, slack);
    },
  });
  await slack.start();
  connected = true;
  w.closers.unshift(() => slack.stop());
  return probesPort ?? slack.port;
}

async function startProbes(w: Wiring, slackReady?: () => boolean): Promise<number> {
  const server = await startHealthServer({ port: w.env.port, host: w.host, routes: routesFor(w, slackReady) });
  w.closers.unshift(() => server.close());
  return server.port;
}

/** METRICS_PORT: /metrics alone on its own listener (a NetworkPolicy can then admit only Prometheus there). */
async function startMetricsListener(w: Wiring, port: number): Promise<number> {
  const server = await startHealthServer({ port, host: w.host, routes: [{ path: '/metrics', method: ['GET'], handler: metricsHandler(w.metrics.registry) }] });
  w.closers.unshift(() => server.close());
  return server.port;
}

function watchRedis(redis: Redis, log: Logger, where: string): void {
  let lastReport = 0;
  let down = false;
  redis.on('error', (err) => {
    down = true;
    if (Date.now() - lastReport > 10_000) log.error({ err: describeError(err), redis: where }, 'Redis is unreachable; retrying (check REDIS_URL)');
    lastReport = Date.now();
  });
  redis.on('ready', () => {
    if (down) log.warn({ redis: where }, 'Redis answers again');
    down = false;
  });
}

/** Wiring only: config → adapters → the role asked for. */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const env = readRuntimeEnv(options.env);
  const { settings: redisSettings, warnings: redisWarnings } = redisSettingsFrom(options.env, options.loaded.config.redis);
  const redact = createRedactor(secretValues(options.loaded, [...envSecrets(env, options.env), ...redisSecrets(redisSettings)]), { names: configNames(options.loaded.config) });
  const log = options.log ?? createLogger({ redact, level: env.logLevel });
  for (const warning of [...options.loaded.warnings, ...redisWarnings]) log.warn(warning);
  const redis = createRedis(redisSettings, 'worker');
  watchRedis(redis, log, describeRedis(redisSettings));
  const producer = createRedis(redisSettings, 'producer');
  producer.on('error', () => undefined);
  const prefix = options.prefix ?? env.queuePrefix ?? DEFAULT_PREFIX;
  const queues = new JobQueues(producer, redact, prefix, undefined, { dedupJobs: DEDUPLICATED_JOBS, failover: isSentinel(redisSettings) });
  const metrics = createMetrics({ commandNames: commandList.map((c) => c.name), jobKinds: [...workerJobs.keys()] });
  metrics.setQueueDepthSupplier(bullmqDepthSupplier(() => [...workerJobs.keys()].map((name) => queues.queue(name))));
  const audit = createAuditLog({ redis, key: auditKey(options.loaded.config, prefix), maxEntries: options.loaded.config.audit?.maxEntries, log, redact });
  const plans = createPlanStore(redis, { prefix });
  const slack = env.botToken
    ? createSlackGateway({
        token: env.botToken,
        ...(env.slackApiUrl ? { slackApiUrl: env.slackApiUrl } : {}),
        redact,
        log,
        metrics,
        onFallback: (reason) => metrics.recordSlackFallback(reason),
        // Shared by the bot and every worker: one pace per channel, and where each command's answer is.
        pacer: redisPacer(producer, { prefix, intervalMs: CHANNEL_INTERVAL_MS, log }),
        answers: redisAnswerBoard(producer, { prefix, log }),
      })
    : undefined;
  const w: Wiring = { options, env, host: options.host ?? env.host, redact, log, prefix, redis, producer, queues, metrics, audit, plans, slack, closers: [] };
  const close = async () => {
    for (const c of w.closers) await c().catch((err: unknown) => log.warn({ err: describeError(err) }, 'close failed'));
    await slack?.close().catch(() => undefined);
    await queues.close().catch(() => undefined);
    producer.disconnect();
    redis.disconnect();
  };
  try {
    if (options.role !== 'bot') await startWorkers(w);
    const port = options.role === 'worker' ? await startProbes(w) : await startBot(w);
    const metricsPort = env.metricsPort === undefined ? undefined : await startMetricsListener(w, env.metricsPort);
    log.info({ role: options.role, host: w.host, port, ...(metricsPort !== undefined ? { metricsPort } : {}), mode: env.mode, jobs: [...workerJobs.keys()] }, 'maas-chatops started');
    return { port, log, ...(metricsPort !== undefined ? { metricsPort } : {}), redact, metrics, queues, audit, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** How long a stopping process waits for its jobs and connections before it exits anyway. */
export const SHUTDOWN_BOUND_MS = 10_000;

/** EXIT.failed of the CLI: the process did not start, or did not stop cleanly. */
const EXIT_FAILED = 2;

/**
 * Runs a role until SIGTERM/SIGINT: stop taking work, finish or hand back active jobs, exit. The
 * shutdown is bounded: after SHUTDOWN_BOUND_MS (or at a second signal) it logs what it gave up on
 * and exits non-zero; a repair cut short resumes from its journal on another worker.
 */
export async function runRole(role: Role, options: { loaded: LoadedConfig; env: NodeJS.ProcessEnv }): Promise<number> {
  const signalled = nextSignal();
  let runtime: Runtime;
  try {
    runtime = await Promise.race([startRuntime({ role, ...options }), signalled.then((signal) => Promise.reject(new StoppedWhileStarting(signal)))]);
  } catch (err) {
    return startFailed(role, options, err);
  }
  const signal = await signalled;
  runtime.log.info({ role, signal, boundMs: SHUTDOWN_BOUND_MS }, 'stopping: no new work; active jobs finish');
  const outcome = await closeWithin(runtime.close, SHUTDOWN_BOUND_MS, nextSignal());
  if (outcome !== 'closed') {
    runtime.log.error({ role, boundMs: SHUTDOWN_BOUND_MS, cause: outcome }, outcome === 'timeout' ? `shutdown did not finish within ${SHUTDOWN_BOUND_MS / 1000} s; exiting anyway` : 'second signal during shutdown; exiting now');
    process.exit(EXIT_FAILED);
  }
  runtime.log.info({ role }, 'stopped');
  // Nothing should be left to keep the process alive; if a library left a timer behind, it still ends.
  setTimeout(() => process.exit(0), 1_000).unref();
  return 0;
}

class StoppedWhileStarting extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`${signal} while starting; stopped before it was up`);
  }
}

/** A role that could not start says why on one JSON log line (the process's stderr is all JSON) and exits 64 (config) or 2. */
export function startFailed(role: Role, options: { loaded?: LoadedConfig; env: NodeJS.ProcessEnv }, err: unknown): number {
  const { loaded } = options;
  const redact = createRedactor(loaded ? secretValues(loaded) : [], loaded ? { names: configNames(loaded.config) } : {});
  const log = createLogger({ redact, level: options.env.LOG_LEVEL ?? 'info' });
  const code = err instanceof ChatopsError ? err.code : undefined;
  log.fatal({ role, err: describeError(err), ...(code ? { code } : {}) }, `maas-chatops ${role} could not start`);
  if (err instanceof StoppedWhileStarting) process.exit(EXIT_FAILED);
  return isConfigOrUsageError(err) ? 64 : EXIT_FAILED;
}

function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on);
      process.off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

/** Runs `close` for at most `boundMs`, or until `interrupt` settles: 'closed', 'timeout' or 'interrupted'. */
export async function closeWithin(close: () => Promise<void>, boundMs: number, interrupt: Promise<unknown> = new Promise(() => undefined)): Promise<'closed' | 'timeout' | 'interrupted'> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), boundMs);
  });
  try {
    return await Promise.race([close().then(() => 'closed' as const), bound, interrupt.then(() => 'interrupted' as const)]);
  } finally {
    clearTimeout(timer);
  }
}
