import type { Redis } from 'ioredis';
import { jobRegistry } from '../jobs/index.ts';
import '../commands/index.ts';
import type { Adapters } from './adapters.ts';
import type { LoadedConfig } from './config.ts';
import { envSecrets, readRuntimeEnv, requireSlackEnv, type RuntimeEnv } from './env.ts';
import { describeError } from './errors.ts';
import { createLogger, type Logger } from './log.ts';
import { JobQueues } from './queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from './queue/job-workers.ts';
import { createRedis, pingRedis } from './queue/redis-connection.ts';
import { DEFAULT_PREFIX } from './queue/queue-names.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { createSlackApp, type CustomRoute, type SlackApp } from './slack/app.ts';
import { createSlackNotifier } from './slack/notifier.ts';
import { startRoutesServer, closeServer } from './slack/routes-server.ts';

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
  queues?: JobQueues;
  close(): Promise<void>;
}

function healthRoutes(redis: Redis, slackReady: () => boolean): CustomRoute[] {
  return [
    { path: '/healthz', method: ['GET'], handler: (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n') },
    {
      path: '/readyz',
      method: ['GET'],
      handler: (_req, res) => {
        void pingRedis(redis).then((redisOk) => {
          const checks = { redis: redisOk, config: true, slack: slackReady() };
          const ok = Object.values(checks).every(Boolean);
          res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(`${JSON.stringify(checks)}\n`);
        });
      },
    },
  ];
}

async function buildAdapters(options: RuntimeOptions): Promise<Adapters> {
  if (options.adapters) return options.adapters;
  const { createRealAdapters } = await import('./real-adapters.ts');
  return createRealAdapters(options.loaded.config);
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const env: RuntimeEnv = readRuntimeEnv(options.env);
  const { botToken } = options.role === 'worker' ? { botToken: env.botToken ?? '' } : requireSlackEnv(env);
  const redact = createRedactor([...options.loaded.secrets, ...envSecrets(env)]);
  const log = options.log ?? createLogger({ redact, level: env.logLevel });
  for (const w of options.loaded.warnings) log.warn(w);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const redis = createRedis(env.redisUrl, 'worker');
  let lastRedisError = 0;
  redis.on('error', (err) => {
    if (Date.now() - lastRedisError > 10_000) log.error({ err: describeError(err) }, 'Redis is unreachable; retrying (check REDIS_URL)');
    lastRedisError = Date.now();
  });
  const closers: (() => Promise<void>)[] = [];
  let slack: SlackApp | undefined;
  let queues: JobQueues | undefined;
  let workers: RunningWorkers | undefined;

  if (options.role !== 'bot') {
    const adapters = await buildAdapters(options);
    const notifier = botToken ? createSlackNotifier({ token: botToken, ...(env.slackApiUrl ? { slackApiUrl: env.slackApiUrl } : {}), redact, log }) : undefined;
    workers = startJobWorkers({ connection: redis, jobs: jobRegistry, context: { config: options.loaded.config, adapters, log }, ...(notifier ? { notifier } : {}), redact, prefix });
    closers.push(() => workers!.close());
  }
  const routes = healthRoutes(redis, () => options.role === 'worker' || slack !== undefined);
  let port: number | undefined;
  if (options.role !== 'worker') {
    const producer = createRedis(env.redisUrl, 'producer');
    producer.on('error', () => undefined);
    queues = new JobQueues(producer, redact, prefix);
    const q = queues;
    slack = await createSlackApp({
      config: options.loaded.config,
      botToken,
      ...(env.signingSecret ? { signingSecret: env.signingSecret } : {}),
      ...(env.appToken ? { appToken: env.appToken } : {}),
      mode: env.mode,
      port: env.port,
      ...(options.host ? { host: options.host } : {}),
      ...(env.slackApiUrl ? { slackApiUrl: env.slackApiUrl } : {}),
      enqueue: (name, data) => q.enqueue(name, data),
      log,
      redact,
      customRoutes: routes,
    });
    await slack.start();
    port = slack.port;
    closers.unshift(async () => {
      await slack!.stop();
      await q.close();
      producer.disconnect();
    });
  } else {
    const server = await startRoutesServer(routes, { port: env.port, ...(options.host ? { host: options.host } : {}) });
    port = server.port;
    closers.unshift(() => closeServer(server.server));
  }
  log.info({ role: options.role, port, mode: env.mode, jobs: [...jobRegistry.keys()] }, 'maas-chatops started');
  return {
    port,
    redact,
    ...(queues ? { queues } : {}),
    close: async () => {
      for (const close of closers) await close().catch((err: unknown) => log.warn({ err: describeError(err) }, 'close failed'));
      redis.disconnect();
    },
  };
}

/** Runs a role until SIGTERM/SIGINT: stop taking work, finish or hand back active jobs, exit. */
export async function runRole(role: Role, options: { loaded: LoadedConfig; env: NodeJS.ProcessEnv }): Promise<number> {
  const runtime = await startRuntime({ role, ...options });
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await runtime.close();
  return 0;
}
