import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { scheduledScans } from '../../src/edge/alerts/scan-checks.ts';
import { loadConfig } from '../../src/core/config.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { REPAIR_EXECUTE_JOB } from '../../src/engine/repair/execute-job-data.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { aliasClusters, aliasSites, numbered, writeLabConfigVariant, type WrittenConfig } from '../../bench/lib/lab-config.ts';
import { startRoleProcess, type RoleProcess } from '../../bench/lib/role-process.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

const SITES = numbered('s', 6);
const CLUSTERS = numbered('c', 6);
const MAAS_LATENCY_MS = 300;

/**
 * Three `maas-chatops worker` processes on one Redis and one queue prefix, a bot in this
 * process: every command comes back exactly once, every job runs once (counted at the MAAS
 * simulator and in BullMQ), the work is shared, and a worker stopped with SIGTERM while it runs
 * jobs finishes them and loses nothing.
 */
describe('scale-out: several worker processes share one Redis', () => {
  let world: LabWorld;
  let emulator: SlackEmulator;
  let config: WrittenConfig;
  let bot: Runtime;
  let redis: Redis;
  const workers: RoleProcess[] = [];
  const prefix = freshPrefix('scale');

  beforeAll(async () => {
    world = await startLabWorld();
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
    config = writeLabConfigVariant(world, (doc) => {
      aliasSites(doc, 'site-b', SITES);
      aliasClusters(doc, 'prod', CLUSTERS);
    });
    redis = new Redis(TEST_REDIS_URL);
    const env = { ...world.env, REDIS_URL: TEST_REDIS_URL, MAAS_CHATOPS_QUEUE_PREFIX: prefix, PORT: '0', SLACK_BOT_TOKEN: emulator.botToken, SLACK_API_URL: emulator.apiUrl };
    workers.push(...(await Promise.all([1, 2, 3].map(() => startRoleProcess({ role: 'worker', configPath: config.path, env })))));
    bot = await startRuntime({
      role: 'bot',
      loaded: loadConfig({ path: config.path, env: world.env }),
      env: { ...env, SLACK_SIGNING_SECRET: emulator.signingSecret },
      host: '127.0.0.1',
      log: silentLogger(),
    });
  }, 60_000);

  afterAll(async () => {
    await bot?.close();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await emulator?.close();
    await world?.close();
    config?.remove();
    if (redis) {
      await deletePrefix(redis, prefix);
      redis.disconnect();
    }
  });

  it('12 distinct commands → 12 results, 12 jobs each run once, shared by the workers; SIGTERM to one mid-run loses nothing', async () => {
    world.maas.setLatency(MAAS_LATENCY_MS);
    world.maas.resetCalls();
    const appUrl = `http://127.0.0.1:${bot.port}`;
    const texts = [...SITES.map((s) => `mac-diff ${s}`), ...CLUSTERS.map((c) => `dns-check ${c}`)];
    const sent = await Promise.all(texts.map((text) => emulator.sendSlashCommand({ appUrl, text, user: LAB_USERS.operator, channel: LAB_CHANNELS.ops })));
    for (const s of sent) expect(s.status).toBe(200);

    // Stop the first worker while it holds jobs.
    const queues = ['mac-diff', 'dns-check'].map((k) => new Queue(queueNameFor(k), { connection: redis, prefix }));
    const first = workers[0]!;
    const activeOn = async (pid: number) => {
      const active = (await Promise.all(queues.map((q) => q.getActive()))).flat();
      return active.filter((j) => j.processedBy?.endsWith(`:${pid}`)).length;
    };
    await waitUntil(async () => (await activeOn(first.pid)) > 0, 20_000);
    const stoppedWith = first.stop('SIGTERM');

    const results = await emulator.waitFor(
      (e) => {
        const posted = e.resultsIn(LAB_CHANNELS.ops);
        return posted.length >= texts.length ? posted : undefined;
      },
      { timeoutMs: 60_000, description: `${texts.length} results` },
    );
    expect(await stoppedWith).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    // One message per command: each result replaced its command's answer, nothing was posted twice.
    expect(emulator.resultsIn(LAB_CHANNELS.ops)).toHaveLength(texts.length);
    expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => !m.threadTs && !m.ephemeral)).toHaveLength(texts.length);
    expect(results.filter((m) => /^CRITICAL: 9 of 12 machines at s-\d have drifted MACs/.test(m.text)).map((m) => /at (s-\d)/.exec(m.text)?.[1]).sort()).toEqual([...SITES].sort());
    expect(results.filter((m) => m.text.startsWith('CRITICAL: API record WIPED'))).toHaveLength(CLUSTERS.length);

    // Each job ran once: two MAAS reads per mac-diff, one DNS lookup per dns-check, one BullMQ attempt each.
    const calls = world.maas.calls.map((c) => `${c.path}${c.op ? `?op=${c.op}` : ''}`);
    expect(calls.filter((c) => c === '/MAAS/api/2.0/machines/')).toHaveLength(SITES.length);
    expect(calls.filter((c) => c === '/MAAS/api/2.0/machines/?op=power_parameters')).toHaveLength(SITES.length);
    expect(calls.filter((c) => c.endsWith('/dnsresources/'))).toHaveLength(CLUSTERS.length);
    const done = (await Promise.all(queues.map((q) => q.getCompleted()))).flat();
    expect(done).toHaveLength(texts.length);
    for (const job of done) expect(job.attemptsStarted).toBe(1);
    for (const q of queues) expect(await q.getJobCounts('waiting', 'active', 'failed', 'delayed')).toEqual({ waiting: 0, active: 0, failed: 0, delayed: 0 });
    const ranOn = new Set(done.map((j) => j.processedBy));
    expect(ranOn.size).toBeGreaterThanOrEqual(2);
    expect([...ranOn].some((name) => name?.endsWith(`:${first.pid}`))).toBe(true);
    await Promise.all(queues.map((q) => q.close()));
  }, 90_000);

  it('a repair plan approved three times at once, with two workers left, runs once', async () => {
    world.maas.setLatency(0);
    const appUrl = `http://127.0.0.1:${bot.port}`;
    const asked = await emulator.sendSlashCommand({ appUrl, text: 'fix-macs site-b', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    expect(asked.status).toBe(200);
    const planText = (m: { blocks?: unknown[] }) => /plan `([0-9a-f]{16})`/.exec(JSON.stringify(m.blocks ?? []))?.[1];
    const plan = await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.ops).find((m) => m.via === 'chat.postMessage' && !m.threadTs && planText(m)), {
      timeoutMs: 30_000,
      description: 'the fix-macs plan',
    });
    world.maas.resetCalls();
    const clicks = await Promise.all(
      [1, 2, 3].map(() => emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, user: LAB_USERS.approver, channel: LAB_CHANNELS.ops, messageTs: plan.ts, value: planText(plan)! })),
    );
    for (const c of clicks) expect(c.status).toBe(200);
    // The result is the plan message edited once more; the thread carries only progress.
    const finished = /fix-macs site-b (done|STOPPED)/;
    const resultEdits = () => (emulator.channelMessages(LAB_CHANNELS.ops).find((m) => m.ts === plan.ts)?.updates ?? []).filter((u) => finished.test(u.text));
    await emulator.waitFor(() => resultEdits().length >= 1, { timeoutMs: 60_000, description: 'the plan message showing the result' });
    await new Promise((r) => setTimeout(r, 500));
    expect(resultEdits()).toHaveLength(1);
    expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.threadTs === plan.ts && finished.test(m.text))).toEqual([]);
    const writes = world.maas.calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}${c.op ? `?op=${c.op}` : ''}`);
    expect(writes.length).toBeGreaterThan(0);
    expect(new Set(writes).size).toBe(writes.length);
    const planning = new Queue(queueNameFor('fix-macs'), { connection: redis, prefix });
    const execute = new Queue(queueNameFor(REPAIR_EXECUTE_JOB), { connection: redis, prefix });
    const done = [...(await planning.getCompleted()), ...(await execute.getCompleted())];
    // One plan job and one execute job, each started once.
    expect(done).toHaveLength(2);
    for (const job of done) expect(job.attemptsStarted).toBe(1);
    await Promise.all([planning.close(), execute.close()]);
  }, 90_000);
});

describe('scale-out: schedulers are shared, not multiplied', () => {
  it('three workers starting together leave one scheduler per scan and one first run each', async () => {
    const world = await startLabWorld();
    const config = writeLabConfigVariant(world, (doc) => {
      doc.schedules = { dns: '1h', resolver: '1h', macs: '1h' };
    });
    const prefix = freshPrefix('scale-sched');
    const redis = new Redis(TEST_REDIS_URL);
    const workers: RoleProcess[] = [];
    try {
      const env = { ...world.env, REDIS_URL: TEST_REDIS_URL, MAAS_CHATOPS_QUEUE_PREFIX: prefix, PORT: '0' };
      workers.push(...(await Promise.all([1, 2, 3].map(() => startRoleProcess({ role: 'worker', configPath: config.path, env })))));
      const expected = scheduledScans(loadConfig({ path: config.path, env: world.env }).config).length;
      expect(expected).toBeGreaterThanOrEqual(5);
      const scans = new Queue(queueNameFor('scan'), { connection: redis, prefix });
      await waitUntil(async () => (await scans.getJobSchedulers(0, -1)).length >= expected, 30_000);
      await waitUntil(async () => ((await scans.getJobCounts('completed')).completed ?? 0) >= expected, 60_000);
      await new Promise((r) => setTimeout(r, 1_000));
      const schedulers = await scans.getJobSchedulers(0, -1);
      expect(schedulers).toHaveLength(expected);
      expect(new Set(schedulers.map((s) => s.key)).size).toBe(expected);
      // Each scheduler's first run happened once, though three processes upserted it.
      expect(await scans.getJobCounts('completed', 'active', 'waiting')).toEqual({ completed: expected, active: 0, waiting: 0 });
      await scans.close();
      expect(await Promise.all(workers.map((w) => w.stop('SIGTERM')))).toEqual([0, 0, 0]);
    } finally {
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await world.close();
      config.remove();
    }
  }, 120_000);
});
