import type { Redis } from 'ioredis';
import { commandList } from '../commands/index.ts';
import { jobRegistry } from '../jobs/index.ts';
import type { Adapters } from './adapters.ts';
import type { LoadedConfig } from './config.ts';
import { envSecrets, readRuntimeEnv, requireSlackEnv, type RuntimeEnv } from './env.ts';
import { describeError } from './errors.ts';
import { healthRoutes, startHealthServer, type Route } from './health.ts';
import { createLogger, type Logger } from './log.ts';
import { bullmqDepthSupplier, createMetrics, type Metrics } from './metrics.ts';
import { dashboardRoutesFromEnv } from './queue-dashboard.ts';
import { JobQueues } from './queue/job-queues.ts';
import { startJobWorkers } from './queue/job-workers.ts';
import { DEFAULT_PREFIX } from './queue/queue-names.ts';
import { createRedis, pingRedis } from './queue/redis-connection.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { createSlackApp, type SlackApp } from './slack/app.ts';
import { createSlackNotifier } from './slack/notifier.ts';

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
  /** Address to listen on; default every interface. */
  host?: string;
}

export interface Runtime {
  port: number | undefined;
  redact: Redactor;
  metrics: Metrics;
  queues: JobQueues;
  close(): Promise<void>;
}

interface Wiring {
  options: RuntimeOptions;
  env: RuntimeEnv;
  redact: Redactor;
  log: Logger;
  prefix: string;
  redis: Redis;
  queues: JobQueues;
  metrics: Metrics;
  closers: (() => Promise<void>)[];
}

async function buildAdapters(w: Wiring): Promise<Adapters> {
  if (w.options.adapters) return w.options.adapters;
  const { createRealAdapters } = await import('./real-adapters.ts');
  return createRealAdapters(w.options.loaded.config, { onMaasRequest: (info) => w.metrics.observeMaasRequest(info) });
}

function routesFor(w: Wiring, slackReady: (() => boolean) | undefined): Route[] {
  const queueList = () => [...jobRegistry.keys()].map((name) => w.queues.queue(name));
  return [
    ...healthRoutes({
      checks: { redis: () => pingRedis(w.redis), config: () => true, ...(slackReady ? { slack: slackReady } : {}) },
      registry: w.metrics.registry,
    }),
    ...dashboardRoutesFromEnv(w.options.env, { queues: queueList, redact: w.redact }),
  ];
}

async function startWorkers(w: Wiring): Promise<void> {
  const adapters = await buildAdapters(w);
  const token = w.env.botToken;
  const notifier = token ? createSlackNotifier({ token, ...(w.env.slackApiUrl ? { slackApiUrl: w.env.slackApiUrl } : {}), redact: w.redact, log: w.log }) : undefined;
  if (!notifier) w.log.warn('SLACK_BOT_TOKEN is not set: results are not posted to Slack');
  const workers = startJobWorkers({
    connection: w.redis,
    jobs: jobRegistry,
    context: { config: w.options.loaded.config, adapters, log: w.log },
    ...(notifier ? { notifier } : {}),
    redact: w.redact,
    prefix: w.prefix,
  });
  w.closers.push(() => workers.close());
}

async function startBot(w: Wiring): Promise<number | undefined> {
  const { botToken } = requireSlackEnv(w.env);
  let slack: SlackApp | undefined;
  slack = await createSlackApp({
    config: w.options.loaded.config,
    botToken,
    ...(w.env.signingSecret ? { signingSecret: w.env.signingSecret } : {}),
    ...(w.env.appToken ? { appToken: w.env.appToken } : {}),
    mode: w.env.mode,
    port: w.env.port,
    ...(w.options.host ? { host: w.options.host } : {}),
    ...(w.env.slackApiUrl ? { slackApiUrl: w.env.slackApiUrl } : {}),
    enqueue: (name, data) => w.queues.enqueue(name, data),
    submit: (name, data) => w.queues.submit(name, data),
    log: w.log,
    redact: w.redact,
    customRoutes: routesFor(w, () => slack !== undefined),
  });
  await slack.start();
  const started = slack;
  w.closers.unshift(() => started.stop());
  return started.port;
}

async function startProbes(w: Wiring): Promise<number> {
  const server = await startHealthServer({ port: w.env.port, ...(w.options.host ? { host: w.options.host } : {}), routes: routesFor(w, undefined) });
  w.closers.unshift(() => server.close());
  return server.port;
}

function watchRedis(redis: Redis, log: Logger): void {
  let lastReport = 0;
  redis.on('error', (err) => {
    if (Date.now() - lastReport > 10_000) log.error({ err: describeError(err) }, 'Redis is unreachable; retrying (check REDIS_URL)');
    lastReport = Date.now();
  });
}

/** Wiring only: config → adapters → the role asked for. */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const env = readRuntimeEnv(options.env);
  const redact = createRedactor([...options.loaded.secrets, ...envSecrets(env, options.env)]);
  const log = options.log ?? createLogger({ redact, level: env.logLevel });
  for (const warning of options.loaded.warnings) log.warn(warning);
  const redis = createRedis(env.redisUrl, 'worker');
  watchRedis(redis, log);
  const producer = createRedis(env.redisUrl, 'producer');
  producer.on('error', () => undefined);
  const prefix = options.prefix ?? env.queuePrefix ?? DEFAULT_PREFIX;
  const queues = new JobQueues(producer, redact, prefix);
  const metrics = createMetrics({ commandNames: commandList.map((c) => c.name), jobKinds: [...jobRegistry.keys()] });
  metrics.setQueueDepthSupplier(bullmqDepthSupplier([...jobRegistry.keys()].map((name) => queues.queue(name))));
  const w: Wiring = { options, env, redact, log, prefix, redis, queues, metrics, closers: [] };
  const close = async () => {
    for (const c of w.closers) await c().catch((err: unknown) => log.warn({ err: describeError(err) }, 'close failed'));
    await queues.close().catch(() => undefined);
    producer.disconnect();
    redis.disconnect();
  };
  try {
    if (options.role !== 'bot') await startWorkers(w);
    const port = options.role === 'worker' ? await startProbes(w) : await startBot(w);
    log.info({ role: options.role, port, mode: env.mode, jobs: [...jobRegistry.keys()] }, 'maas-chatops started');
    return { port, redact, metrics, queues, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Runs a role until SIGTERM/SIGINT: stop taking work, finish or hand back active jobs, exit. */
export async function runRole(role: Role, options: { loaded: LoadedConfig; env: NodeJS.ProcessEnv }): Promise<number> {
  const runtime = await startRuntime({ role, ...options });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await runtime.close();
  return 0;
}
