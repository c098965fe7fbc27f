/**
 * The load rig shared by bench/ack-latency.ts and bench/end-to-end.ts: the lab's simulators and
 * the Slack emulator in this process; the bot (`maas-chatops bot`, HTTP mode), N workers
 * (`maas-chatops worker`), a bare Bolt app and the load generator each in a process of its own;
 * real Redis under a fresh prefix. Many sites and clusters alias the lab's, so that a burst holds
 * many distinct checks (each asked for several times, as people do in an incident).
 */
import { deletePrefix } from '../../lab/redis-keys.ts';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { freePort } from '../../lab/private-redis.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { aliasClusters, aliasSites, numbered, writeLabConfigVariant, type WrittenConfig } from './lab-config.ts';
import { startRoleProcess, type RoleProcess } from './role-process.ts';
import type { LoadCommand, LoadReply, Sample } from './slash-load.ts';

export interface RigOptions {
  workers: number;
  /** Added to every MAAS request: what makes the jobs slow. */
  maasLatencyMs: number;
  /** Distinct mac-diff sites and dns-check clusters in a burst. */
  targets: number;
  redisUrl?: string;
  /** Extra environment for the bot process only (e.g. LOG_LEVEL). */
  botEnv?: Record<string, string>;
  /** Node flags for the bot process only (BENCH_BOT_NODE_FLAGS, e.g. --cpu-prof). */
  botExecArgv?: string[];
  log?: (line: string) => void;
}

export interface PlannedCommand extends LoadCommand {
  kind: 'mac-diff' | 'dns-check';
}

export interface Rig {
  world: LabWorld;
  emulator: SlackEmulator;
  prefix: string;
  botUrl: string;
  bareUrl: string;
  workers: RoleProcess[];
  sites: string[];
  clusters: string[];
  /** `total` commands alternating mac-diff and dns-check over the targets, one channel per target. */
  plan(total: number): PlannedCommand[];
  burst(url: string, commands: LoadCommand[], concurrency: number): Promise<{ samples: Sample[]; wallMs: number }>;
  addWorkers(n: number): Promise<void>;
  /** Jobs waiting or active, per kind. */
  backlog(): Promise<{ waiting: number; active: number; completed: number }>;
  /** Waits until the bot has answered every one of `commands` (its post-ack work is done). */
  waitForAnswers(commands: LoadCommand[], timeoutMs?: number): Promise<void>;
  /** Waits until no job is waiting or active. */
  drain(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export function channelFor(kind: 'mac-diff' | 'dns-check', index: number): string {
  return `C0L${kind === 'mac-diff' ? 'M' : 'D'}${String(index + 1).padStart(3, '0')}`;
}

export async function startRig(options: RigOptions): Promise<Rig> {
  const log = options.log ?? (() => undefined);
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!/^redis:\/\/127\.\d+\.\d+\.\d+(:\d+)?(\/\d+)?$/.test(redisUrl)) throw new Error(`benchmarks use a loopback Redis only, not ${redisUrl}`);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const closers: (() => Promise<unknown> | void)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const world = await startLabWorld();
    closers.push(() => world.close());
    world.maas.setLatency(options.maasLatencyMs);
    const emulator = await startSlackEmulator();
    closers.push(() => emulator.close());
    const sites = numbered('m', options.targets);
    const clusters = numbered('d', options.targets);
    const config: WrittenConfig = writeLabConfigVariant(world, (doc) => {
      delete doc.slack.commandChannels;
      aliasSites(doc, 'site-b', sites);
      aliasClusters(doc, 'prod', clusters);
    });
    closers.push(() => config.remove());
    const redis = new Redis(redisUrl);
    closers.push(async () => {
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });
    const queues = ['mac-diff', 'dns-check'].map((k) => new Queue(queueNameFor(k), { connection: redis, prefix }));
    closers.push(() => Promise.all(queues.map((q) => q.close())));

    const env = {
      ...world.env,
      REDIS_URL: redisUrl,
      MAAS_CHATOPS_QUEUE_PREFIX: prefix,
      PORT: '0',
      SLACK_MODE: 'http',
      SLACK_BOT_TOKEN: emulator.botToken,
      SLACK_SIGNING_SECRET: emulator.signingSecret,
      SLACK_API_URL: emulator.apiUrl,
    };
    const workers: RoleProcess[] = [];
    closers.push(() => Promise.all(workers.map((w) => w.stop('SIGTERM'))));
    const addWorkers = async (n: number) => {
      const started = await Promise.all(Array.from({ length: n }, () => startRoleProcess({ role: 'worker', configPath: config.path, env, startTimeoutMs: 60_000 })));
      workers.push(...started);
      log(`workers: ${workers.length}`);
    };
    await addWorkers(options.workers);
    const bot = await startRoleProcess({ role: 'bot', configPath: config.path, env: { ...env, ...options.botEnv }, port: await freePort(), ...(options.botExecArgv ? { execArgv: options.botExecArgv } : {}), startTimeoutMs: 60_000 });
    closers.push(() => bot.stop('SIGTERM'));
    const botUrl = `http://127.0.0.1:${bot.port}/slack/events`;

    const bare = fork(here('./bare-bolt-app.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    closers.push(() => stopChild(bare));
    const barePort = await firstMessage<{ port: number }>(bare);
    const bareUrl = `http://127.0.0.1:${barePort.port}/slack/events`;

    const client = fork(here('./slash-load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    closers.push(() => stopChild(client));
    await firstMessage(client);
    log(`rig up: bot pid ${bot.pid}, bare Bolt app pid ${bare.pid}, load generator pid ${client.pid}, worker pids ${workers.map((w) => w.pid).join(' ')}`);

    const plan = (total: number): PlannedCommand[] =>
      Array.from({ length: total }, (_, i) => {
        const kind = i % 2 === 0 ? 'mac-diff' : 'dns-check';
        const t = Math.floor(i / 2) % options.targets;
        const target = kind === 'mac-diff' ? sites[t] : clusters[t];
        const channel = channelFor(kind, t);
        const user = i % 3 === 0 ? LAB_USERS.approver : LAB_USERS.operator;
        return { kind, text: `${kind} ${target}`, user, channel, responseUrl: emulator.responseUrlFor(channel, user) };
      });

    const burst = async (url: string, commands: LoadCommand[], concurrency: number) => {
      const reply = new Promise<LoadReply>((resolve) => client.once('message', (m: LoadReply) => resolve(m)));
      client.send({ type: 'run', url, signingSecret: emulator.signingSecret, concurrency, commands });
      const m = await reply;
      if (m.type === 'error') throw new Error(`load generator: ${m.message}`);
      return { samples: m.samples, wallMs: m.wallMs };
    };

    const backlog = async () => {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'active', 'completed', 'prioritized')));
      const total = { waiting: 0, active: 0, completed: 0 };
      for (const c of counts) {
        total.waiting += (c.waiting ?? 0) + (c.prioritized ?? 0);
        total.active += c.active ?? 0;
        total.completed += c.completed ?? 0;
      }
      return total;
    };
    const drain = async (timeoutMs = 300_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const b = await backlog();
        if (b.waiting === 0 && b.active === 0) return;
        if (Date.now() > deadline) throw new Error(`jobs still queued after ${timeoutMs} ms: ${JSON.stringify(b)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const waitForAnswers = async (commands: LoadCommand[], timeoutMs = 120_000) => {
      const pending = new Set(commands.map((c) => c.responseUrl));
      let seen = 0;
      await emulator.waitFor(
        (e) => {
          for (; seen < e.messages.length; seen++) pending.delete(e.messages[seen]!.responseUrl ?? '');
          return pending.size === 0;
        },
        { timeoutMs, intervalMs: 50, description: `the bot's answers to ${commands.length} commands` },
      );
    };
    return { world, emulator, prefix, botUrl, waitForAnswers, bareUrl, workers, sites, clusters, plan, burst, addWorkers, backlog, drain, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function firstMessage<T = unknown>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before it was ready`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}


/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summary(values: number[]): { n: number; p50: number; p95: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
}
