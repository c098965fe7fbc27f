import { checkJob } from '../../jobs/check-job.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import { loadConfig } from '../../src/core/config.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { freePort, redisAnswers } from '../../lab/private-redis.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { createLogger, silentLogger } from '../../src/core/log.ts';
import { apiUserOf } from '../../src/adapters/maas/api-user.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { createRedactor } from '../../src/core/redact.ts';
import type { Report } from '../../src/core/report.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';
import { waitUntil } from '../helpers/redis.ts';
import { dieWithParent } from '../../lab/die-with-parent.ts';

const macDiffJob = checkJob(macDiffCheck);

/*
 * Faults injected into real peers, with the figures written to the test output and, when
 * WRITE_BENCH_RESULTS=1 (so that `npm test` leaves the tree clean), to the `## faults` section of
 * bench/RESULTS.md: MAAS 5xx bursts and timeouts, a dead and a hanging VM host, a Slack 429 storm,
 * Redis down at start, Redis killed -9 and restarted under running jobs.
 */

const figures: Record<string, string> = {};
function record(name: string, text: string): void {
  figures[name] = text;
  console.log(`faults: ${name}: ${text}`);
}

afterAll(() => {
  if (!Object.keys(figures).length || process.env.WRITE_BENCH_RESULTS !== '1') return;
  const path = join(import.meta.dirname, '../../bench/RESULTS.md');
  const section = [
    '## faults',
    '',
    `Reproduce: \`WRITE_BENCH_RESULTS=1 npx vitest run test/security/faults.test.ts\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}). Real peers on loopback: the MAAS simulator, ssh2 VM hosts, the Slack emulator, a private redis-server (appendonly yes, appendfsync always).`,
    '',
    '| fault | injected | outcome |',
    '| --- | --- | --- |',
    ...Object.entries(figures).map(([name, text]) => {
      const [injected, ...outcome] = text.split(' → ');
      return `| ${name} | ${injected} | ${outcome.join(' → ')} |`;
    }),
    '',
  ].join('\n');
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  const start = current.search(/^## faults$/m);
  let next = -1;
  if (start >= 0) {
    const rest = current.slice(start + 1).search(/^## /m);
    next = rest >= 0 ? start + 1 + rest : -1;
  }
  const updated = start < 0 ? `${current.replace(/\n*$/, '\n\n')}${section}` : `${current.slice(0, start)}${section}${next >= 0 ? `\n${current.slice(next)}` : ''}`;
  writeFileSync(path, updated);
});

function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}

const code = (r: Report, c: string) => r.findings.filter((f) => f.code === c);

describe('MAAS faults: retried with backoff, then PROBE_FAILED', () => {
  const labs: MacLab[] = [];
  afterAll(async () => {
    for (const l of labs) await l.close();
  });

  async function labWithClient(options: { retries: number; timeoutMs: number }) {
    const lab = await startMacLab({
      machines: [machine({ system_id: 'm1', hostname: 'm1', zone: 'site-b', macs: ['52:54:00:00:00:01'], power: virshPower('127.0.0.1', 'dom-1') })],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: '127.0.0.1', state: { domains: [{ name: 'dom-1', nics: [{ mac: '52:54:00:00:00:01' }] }] } }] }],
    });
    labs.push(lab);
    const client = createMaasClient(lab.config.maas['region-a']!, { retries: options.retries, backoffMs: 10, timeoutMs: options.timeoutMs });
    const ctx: JobContext = { config: lab.config, adapters: { ...lab.adapters, maas: () => client }, log: silentLogger() };
    // Who the key is, asked before the faults (it is kept per region): the faults below hit the site's reads.
    await apiUserOf(client);
    return { ctx, client, lab };
  }

  it('a short 503 burst is ridden out: the check succeeds after retries', async () => {
    const { ctx, client, lab: l } = await labWithClient({ retries: 2, timeoutMs: 2_000 });
    l.maas.resetCalls();
    l.maas.injectFaults({ status: 503, count: 2, path: /machines\/\?zone/ });
    const [report] = await macDiffJob.run(ctx, { target: 'site-b' });
    await client.close();
    expect(report?.status).toBe('ok');
    const listCalls = l.maas.calls.filter((c) => !c.op).map((c) => c.status);
    expect(listCalls).toEqual([503, 503, 200]);
    record('MAAS 503 burst (2)', '2 × 503 on the machine list → 3 attempts, check OK');
  });

  it('a long 5xx burst ends in PROBE_FAILED naming the status, after 1 + retries attempts per request', async () => {
    const { ctx, client, lab: l } = await labWithClient({ retries: 2, timeoutMs: 2_000 });
    l.maas.resetCalls();
    l.maas.injectFaults({ status: 502, count: 100 });
    const [report] = await macDiffJob.run(ctx, { target: 'site-b' });
    // The job answers as soon as one request gives up; let the other finish its own retries.
    await waitUntil(() => l.maas.calls.length >= 6 && l.maas.calls.every((c) => c.status !== 0), 5_000);
    await new Promise((r) => setTimeout(r, 200));
    await client.close();
    expect(report?.status).toBe('error');
    expect(code(report!, 'PROBE_FAILED')[0]?.evidence.reason).toMatch(/502/);
    expect(l.maas.calls.filter((c) => !c.op)).toHaveLength(3);
    expect(l.maas.calls.filter((c) => c.op === 'power_parameters')).toHaveLength(3);
    record('MAAS 502 storm', `${l.maas.calls.length} requests answered 502 → 3 attempts per request, PROBE_FAILED`);
  });

  it('timeouts are retried, then PROBE_FAILED says MAAS did not answer', async () => {
    const { ctx, client, lab: l } = await labWithClient({ retries: 1, timeoutMs: 150 });
    l.maas.resetCalls();
    // undici runs headersTimeout on its coarse timer (lib/util/timers.js, RESOLUTION_MS 1000): a 150 ms timeout can fire
    // up to about a second late, so an answer 1 s late sometimes won the race. 5 s late cannot.
    l.maas.setLatency(5_000);
    const [report] = await macDiffJob.run(ctx, { target: 'site-b' });
    l.maas.setLatency(0);
    await client.close();
    expect(report?.status).toBe('error');
    expect(code(report!, 'PROBE_FAILED')[0]?.evidence.reason).toMatch(/did not answer .* within 150 ?ms \(2 attempts\)/);
    expect(l.maas.calls.filter((c) => !c.op)).toHaveLength(2);
    record('MAAS timeouts', `every answer 5 s late, client timeout 150 ms → ${l.maas.calls.length} requests (2 attempts each), PROBE_FAILED`);
  });
});

describe('VM host faults: a dead host and a host that accepts and hangs are reported, the others still are', () => {
  it('three hosts: one healthy, one refusing connections, one that accepts TCP and never speaks', async () => {
    const vm = (id: string, host: string) => machine({ system_id: id, hostname: id, zone: 'site-b', macs: ['52:54:00:00:00:0' + id.slice(-1)], power: virshPower(host, `dom-${id}`) });
    const lab = await startMacLab({
      machines: [vm('a1', '127.0.0.1'), vm('b2', '127.0.0.2'), vm('c3', '127.0.0.3')],
      sites: [
        {
          name: 'site-b',
          zone: 'site-b',
          vmHosts: ['127.0.0.1', '127.0.0.2', '127.0.0.3'].map((address, i) => ({ address, state: { domains: [{ name: `dom-${['a1', 'b2', 'c3'][i]}`, nics: [{ mac: `52:54:00:00:00:0${i + 1}` }] }] } })),
        },
      ],
    });
    const hanging: Socket[] = [];
    let tarpit: Server | undefined;
    try {
      await lab.vmHosts.get('127.0.0.2')!.ssh.close();
      const third = lab.vmHosts.get('127.0.0.3')!.ssh;
      const port = third.port;
      await third.close();
      tarpit = createServer((socket) => hanging.push(socket));
      await new Promise<void>((resolve) => tarpit!.listen(port, '127.0.0.3', resolve));
      const ctx: JobContext = { config: lab.config, adapters: { ...lab.adapters, ssh: createSshConnector({ connectTimeoutMs: 500 }) }, log: silentLogger() };
      const [report] = await macDiffJob.run(ctx, { target: 'site-b' });
      const down = code(report!, 'MAC_HOST_UNREACHABLE');
      expect(down.map((f) => f.subject).sort()).toEqual(['127.0.0.2', '127.0.0.3']);
      expect(String(down.find((f) => f.subject === '127.0.0.2')?.evidence.reason)).toMatch(/connection refused/);
      expect(String(down.find((f) => f.subject === '127.0.0.3')?.evidence.reason)).toMatch(/timed out|did not|within/i);
      expect(hanging.length).toBe(1);
      expect(lab.vmHosts.get('127.0.0.1')!.ssh.commands).toHaveLength(1);
      expect(report!.findings.some((f) => f.subject === 'a1' && f.code.startsWith('MAC_') && f.code !== 'MAC_HOST_UNREACHABLE')).toBe(false);
      expect(report!.verdict).toMatch(/1 unchecked \(VM host 127\.0\.0\.2 unreachable\); 1 unchecked \(VM host 127\.0\.0\.3 unreachable\)/);
      record('VM hosts down', '1 host refusing, 1 host accepting and hanging (connect timeout 500 ms) → both MAC_HOST_UNREACHABLE, the healthy host read with 1 command');
    } finally {
      for (const s of hanging) s.destroy();
      await new Promise<void>((resolve) => (tarpit ? tarpit.close(() => resolve()) : resolve()));
      await lab.close();
    }
  });
});

describe('Slack 429 storm', () => {
  it('the notifier waits as Retry-After asks and posts each report exactly once', async () => {
    const emulator = await startSlackEmulator({ channels: ['C0OPS'] });
    try {
      const notifier = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: createRedactor([]), log: silentLogger(), retryConfig: { retries: 6, factor: 1, minTimeout: 50, maxTimeout: 200 } });
      emulator.rateLimitNext(4, 1, 'chat.postMessage');
      await Promise.all([notifier.postError({ channel: 'C0OPS' }, 'first'), notifier.postError({ channel: 'C0OPS' }, 'second')]);
      const posts = emulator.calls.filter((c) => c.method === 'chat.postMessage');
      const limited = posts.filter((c) => c.status === 429).length;
      expect(limited).toBe(4);
      expect(posts.filter((c) => c.status === 200)).toHaveLength(2);
      expect(emulator.channelMessages('C0OPS').map((m) => m.text).sort()).toEqual([':x: first', ':x: second']);
      record('Slack 429 storm', `${limited} × 429 with Retry-After: 1 on chat.postMessage → 2 posts, each exactly once`);
    } finally {
      await emulator.close();
    }
  });
});

/** A redis-server of our own: appendonly, so a kill -9 and a restart on the same port keep the queue. */
class OwnRedis {
  child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'faults-redis-'));
  constructor(readonly port: number) {}
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.dir, '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
    dieWithParent(this.child);
    await waitUntil(() => redisAnswers(this.url, 200), 10_000, 50);
  }
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  async remove(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('Redis faults under the real runtime', () => {
  let world: LabWorld;
  let emulator: SlackEmulator;
  let runtime: Runtime | undefined;
  let redis: OwnRedis;
  const logLines: string[] = [];
  let pendingStart: Promise<Runtime> | undefined;

  function startServe(env: Record<string, string>): Promise<Runtime> {
    const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }) });
    pendingStart = startRuntime({ role: 'serve', loaded: loadConfig({ path: world.configPath, env }), env, prefix: `faults-${Date.now()}`, host: '127.0.0.1', log });
    return pendingStart;
  }

  afterAll(async () => {
    // Workers finish their close against a live Redis.
    if (redis && redis.child?.exitCode !== null) await redis.start().catch(() => undefined);
    await runtime?.close();
    if (!runtime && pendingStart) await (await pendingStart.catch(() => undefined))?.close();
    await world?.close();
    await emulator?.close();
    await redis?.remove();
  }, 60_000);

  it('Redis down at start: the bot starts, says so, /readyz is 503 and a command is told; when Redis comes up everything works', async () => {
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
    world = await startLabWorld();
    redis = new OwnRedis(await freePort());
    const env = { ...world.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: redis.url };
    runtime = await withDeadline(startServe(env), 15_000, 'startRuntime did not return within 15 s while Redis was down: something in the start-up waits for Redis');
    const url = `http://127.0.0.1:${runtime.port}`;

    const notReady = await fetch(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ failed: ['redis'] });
    await waitUntil(() => logLines.some((l) => l.includes('Redis is unreachable; retrying (check REDIS_URL)')), 10_000);

    const refused = await emulator.sendSlashCommand({ appUrl: url, text: 'dns-check prod', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    const answer = await emulator.waitFor((e) => e.answersTo(refused.responseUrl)[0], { timeoutMs: 15_000 });
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toMatch(/^\/maas dns-check failed: the job queue .*(unavailable|did not answer|refused the job)\. .*Redis/);

    await redis.start();
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, 200);
    const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
    const again = await emulator.sendSlashCommand({ appUrl: url, text: 'dns-check prod', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    const ack = await emulator.waitFor((e) => e.answersTo(again.responseUrl)[0], { timeoutMs: 15_000 });
    expect(ack.text).toMatch(/asked for `dns-check prod`: running/);
    // The result replaces the "running" answer: one message for the command.
    const result = await emulator.waitFor(() => ack.updates.some((u) => u.via === 'chat.update') && ack, { timeoutMs: 20_000 });
    expect(result.text).toMatch(/^CRITICAL: API record WIPED/);
    expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.seq > seq && !m.ephemeral && !m.threadTs)).toEqual([ack]);
    record('Redis down at start', 'no Redis when the bot starts → /readyz 503, "Redis is unreachable; retrying" logged, the command told the queue is unavailable; Redis started → /readyz 200, the next command completes');
  }, 60_000);

  it('Redis killed -9 and restarted under running jobs: every job completes, none lost, none done twice', async () => {
    if (!runtime) {
      // The previous test failed before the runtime was up: start afresh with Redis running.
      emulator ??= await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
      world ??= await startLabWorld();
      redis ??= new OwnRedis(await freePort());
      if (redis.child?.exitCode !== null) await redis.start();
      runtime = await startServe({ ...world.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: redis.url });
    }
    const jobs = 4;
    const listCalls = () => world.maas.calls.filter((c) => c.path.endsWith('/machines/') && !c.op).length;
    const before = listCalls();
    const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
    world.maas.setLatency(1_500);
    const ids: string[] = [];
    for (let i = 0; i < jobs; i++) ids.push(await runtime!.queues.enqueue('mac-diff', { target: 'site-b', requestedBy: `U0FAULT${i}`, reply: { channel: LAB_CHANNELS.ops } }, { dedup: false }));
    // Every job is inside MAAS (its machine list requested) when Redis dies.
    await waitUntil(() => listCalls() - before >= jobs, 10_000);
    await redis.kill();
    await new Promise((r) => setTimeout(r, 300));
    await redis.start();
    world.maas.setLatency(0);

    const queue = runtime!.queues.queue('mac-diff');
    await waitUntil(async () => {
      const counts = await queue.getJobCounts('completed', 'failed');
      return (counts.completed ?? 0) + (counts.failed ?? 0) >= jobs;
    }, 40_000, 200);
    const states = await Promise.all(ids.map(async (id) => (await queue.getJob(id))?.getState()));
    // Each result once; the evidence replies that follow each into its thread are not results.
    const posted = emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.seq > seq && m.via === 'chat.postMessage' && /site-b/.test(m.text) && !/^Evidence for /.test(m.text));
    const runs = listCalls() - before;
    const completed = states.filter((s) => s === 'completed').length;
    const lost = jobs - completed - states.filter((s) => s === 'failed').length;
    const duplicates = posted.length - jobs;
    record('Redis kill -9 mid-job', `${jobs} mac-diff jobs running, Redis killed -9 and restarted on the same port → ${completed}/${jobs} completed, ${lost} lost, ${Math.max(0, duplicates)} duplicate posts, ${runs} runs against MAAS`);
    expect(states).toEqual(ids.map(() => 'completed'));
    expect(posted).toHaveLength(jobs);
    expect(runs).toBe(jobs);
  }, 60_000);
});
