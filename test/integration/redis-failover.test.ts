import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LAB_CHANNELS, LAB_USERS } from '../../lab/lab-world.ts';
import { startSentinelBot, type SentinelBot } from '../../lab/sentinel-bot.ts';
import { createLogger } from '../../src/core/log.ts';
import type { EmulatedMessage } from '../../lab/slack-emulator/index.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { redisSettingsFrom } from '../../src/engine/queue/redis-settings.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { REPAIR_EXECUTE_JOB } from '../../src/engine/repair/execute-job-data.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { freshPrefix, waitUntil } from '../helpers/redis.ts';

/** A result's evidence, posted after it in the same thread ("Evidence for dns-check prod"). */
const isEvidence = (m: { text: string }) => /^Evidence for /.test(m.text);

const FAILING_OVER = 'the job queue is failing over to a new Redis primary, so nothing was queued';

/**
 * A real primary, a replica and three sentinels on loopback; `maas-chatops serve` logs in as the
 * ACL user of docs/operations.md (never as default) and finds the primary through the sentinels.
 * The primary is killed with SIGKILL in the middle of the traffic.
 */
describe('Redis Sentinel failover under load', () => {
  let bot: SentinelBot | undefined;
  const logLines: string[] = [];

  afterEach(async () => {
    await bot?.close();
    bot = undefined;
    logLines.length = 0;
  }, 60_000);

  async function startServe(prefix: string, extraConfig = '') {
    // No redaction on this logger: what the code hands it must already be free of secrets.
    const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }) });
    bot = await startSentinelBot({ prefix, log, extraConfig, downAfterMs: 1000 });
    return bot;
  }

  it('a burst of 200 checks across the primary\'s death: each is answered once, a result or "failing over"; /readyz goes 503 and back', async () => {
    const prefix = freshPrefix('failover');
    const { lab, emulator, runtime, url } = await startServe(prefix);
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 50);

    type Outcome = { i: number; queued?: string; refused?: string };
    const outcomes: Promise<Outcome>[] = [];
    const thread = (i: number) => `1700000000.${String(i).padStart(6, '0')}`;
    const readiness: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        readiness.push((await fetch(`${url}/readyz`)).status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    let killedAt = 0;
    for (let i = 0; i < 200; i++) {
      outcomes.push(
        runtime.queues
          .submit('dns-check', { target: 'prod', requestedBy: LAB_USERS.operator, reply: { channel: LAB_CHANNELS.ops, user: LAB_USERS.operator, threadTs: thread(i) } })
          .then((s) => ({ i, queued: s.id }), (err: Error) => ({ i, refused: err.message })),
      );
      // SIGKILL while requests 36-40 are still on their way: their fate on the dying primary is unknown.
      if (i === 40) {
        killedAt = Date.now();
        await lab.primary.kill();
      }
      if (i < 36 || i > 40) await new Promise((r) => setTimeout(r, 25));
    }
    const answered = await Promise.all(outcomes);
    const queued = answered.filter((o) => o.queued);
    const refused = answered.filter((o) => o.refused);
    // Every request got exactly one answer, of one of the two kinds.
    expect(queued.length + refused.length).toBe(200);
    expect(refused.map((o) => o.refused).filter((m) => m !== FAILING_OVER)).toEqual([]);
    // Some arrived in the gap and were told; the ones before and well after were queued.
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.slice(0, 36).every((o) => o.queued)).toBe(true);
    expect(answered.slice(-20).every((o) => o.queued)).toBe(true);

    // Each queued request gets its result exactly once, in its own thread; a refused one gets none.
    // The result, not the evidence replies that follow it into the same thread.
    const postsIn = (i: number) => emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.via === 'chat.postMessage' && m.threadTs === thread(i) && !isEvidence(m));
    await waitUntil(() => queued.every((o) => postsIn(o.i).length >= 1), 45_000, 100);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(queued.filter((o) => postsIn(o.i).length !== 1).map((o) => `${o.i}: ${postsIn(o.i).length} posts`)).toEqual([]);
    expect(refused.filter((o) => postsIn(o.i).length !== 0).map((o) => o.i)).toEqual([]);
    expect(postsIn(0)[0]?.text).toMatch(/^CRITICAL: API record WIPED/);

    polling = false;
    await poller;
    // Not ready while there was no primary, ready again after.
    expect(readiness).toContain(503);
    expect(readiness.at(-1)).toBe(200);
    expect(readiness.slice(readiness.indexOf(503)).lastIndexOf(200)).toBeGreaterThan(0);

    // A replica took over; the bot never needed more than its ACL rule, and never logged a secret.
    expect(await lab.currentPrimaryPort()).toBe(lab.replica.port);
    expect(await lab.aclDenials(lab.replica.port)).toEqual([]);
    const log = logLines.join('');
    for (const secret of [lab.env.REDIS_PASSWORD, lab.env.REDIS_SENTINEL_PASSWORD]) expect(log).not.toContain(secret);
    const readyz = await (await fetch(`${url}/readyz`)).text();
    for (const secret of [lab.env.REDIS_PASSWORD, lab.env.REDIS_SENTINEL_PASSWORD]) expect(readyz).not.toContain(secret);
    expect(killedAt).toBeGreaterThan(0);
  }, 120_000);

  it('a slash command in the gap is told the queue is failing over; the next one after it runs', async () => {
    const prefix = freshPrefix('failover-slack');
    const { lab, emulator, url } = await startServe(prefix);
    await lab.primary.kill();
    const sent = await emulator.sendSlashCommand({ appUrl: url, text: 'dns-check prod', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    expect(sent.status).toBe(200);
    const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { timeoutMs: 15_000 });
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toBe(`/maas dns-check failed: ${FAILING_OVER}. Try again in a few seconds`);

    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 30_000, 100);
    const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
    const again = await emulator.sendSlashCommand({ appUrl: url, text: 'dns-check prod', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    expect(again.status).toBe(200);
    // The check often finishes before its "running" answer is posted (the queue waits for a replica
    // to hold the job first): then no running answer is posted and the result is the answer.
    // Either way the channel shows one message for the command, and it shows the result.
    const shown = () => emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.seq > seq && !m.threadTs && !m.ephemeral && !m.deleted);
    const result = await emulator.waitFor((e) => e.resultsIn(LAB_CHANNELS.ops).find((m) => m.seq > seq), { timeoutMs: 20_000, description: 'the result of the command after the failover' });
    expect(result.text).toMatch(/^CRITICAL: API record WIPED/);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(shown()).toEqual([result]);
    // A running answer, when there was one, is that same message, edited by the result.
    const running = emulator.answersTo(again.responseUrl);
    expect(running.filter((m) => m !== result)).toEqual([]);
  }, 90_000);

  // A process whose connection ioredis ended during the switch never scanned again (every command
  // "Connection is closed"); see test/integration/sentinel-reconnect.test.ts.
  it('the drift schedulers resume on the new primary and raise no alert twice', async () => {
    const prefix = freshPrefix('failover-scan');
    const { lab, emulator, runtime } = await startServe(prefix, '\nschedules:\n  dns: 1s\n');
    // The alerts themselves, not their evidence in their threads.
    const alertPosts = () => emulator.channelMessages(LAB_CHANNELS.alerts).filter((m) => m.via === 'chat.postMessage' && !m.threadTs);
    const scans = runtime.queues.queue('scan');
    const completedScans = async () => (await scans.getJobCounts('completed')).completed ?? 0;
    await waitUntil(() => alertPosts().some((m) => /prod/.test(m.text ?? '')), 30_000, 100);
    await waitUntil(async () => (await completedScans()) >= 4, 30_000, 100);
    const before = alertPosts().map((m) => m.text);

    await lab.primary.kill();
    await waitUntil(async () => (await lab.currentPrimaryPort()) === lab.replica.port, 30_000, 100);
    const atFailover = await completedScans().catch(() => 0);
    // Scans go on: several more complete on the new primary.
    await waitUntil(async () => (await completedScans().catch(() => 0)) >= atFailover + 4, 30_000, 200);
    expect(alertPosts().map((m) => m.text)).toEqual(before);
    expect(before.filter((t) => /prod/.test(t ?? ''))).toHaveLength(1);
    expect(await lab.aclDenials(lab.replica.port)).toEqual([]);
  }, 90_000);

  it('an approved repair cut by the primary\'s death: each write made once, one summary, the job completed on the new primary', async () => {
    const prefix = freshPrefix('failover-repair');
    const { lab, world, emulator, runtime, url } = await startServe(prefix);
    const ops = LAB_CHANNELS.ops;
    const kube = world.kube.prod!;
    const writes = () => [...world.maas.calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`), ...kube.calls.filter((c) => c.method === 'PATCH').map((c) => `PATCH ${c.path}`)];
    const isPlan = (m: EmulatedMessage) => m.via === 'chat.postMessage' && !m.threadTs && /plan `[0-9a-f]{16}`/.test(JSON.stringify(m.blocks));
    await emulator.sendSlashCommand({ appUrl: url, text: 'fix-dns prod', user: LAB_USERS.operator, channel: ops });
    const plan = await emulator.waitFor((e) => e.channelMessages(ops).find(isPlan), { timeoutMs: 20_000, description: 'the fix-dns plan' });
    const planId = /plan `([0-9a-f]{16})`/.exec(JSON.stringify(plan.blocks))?.[1] ?? '';

    // Every MAAS answer takes 0.8 s; the primary dies while the write is on its way.
    world.maas.setLatency(800);
    await emulator.clickButton({ appUrl: url, actionId: APPROVE_ACTION, user: LAB_USERS.approver, channel: ops, messageTs: plan.ts, value: planId });
    await waitUntil(() => world.maas.calls.some((c) => c.method !== 'GET'), 40_000, 10);
    await lab.primary.kill();
    world.maas.setLatency(0);

    // The summary: in the plan's thread, or (since the Slack budget work) in the plan message itself.
    const summaries = () => emulator.channelMessages(ops).filter((m) => m.ts === plan.ts || m.threadTs === plan.ts).filter((m) => /fix-dns prod done: 2 of 2 steps verified/.test(m.text ?? ''));
    await waitUntil(() => summaries().length > 0, 45_000, 100);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(writes()).toHaveLength(2);
    expect(writes()[0]).toMatch(/^PUT .*dnsresources/);
    expect(writes()[1]).toMatch(/^PATCH /);
    expect(summaries()).toHaveLength(1);
    // Nothing is left for BullMQ to find stalled and run again: the one job is completed on the new primary.
    for (const queue of [runtime.queues.queue('fix-dns'), runtime.queues.queue(REPAIR_EXECUTE_JOB)]) {
      expect(await queue.getJobCounts('active', 'wait', 'delayed', 'failed')).toEqual({ active: 0, wait: 0, delayed: 0, failed: 0 });
    }
    const runs = await runtime.queues.queue(REPAIR_EXECUTE_JOB).getJobs(['completed']);
    expect(runs.map((j) => j.data.planId)).toEqual([planId]);
    // The fencing held across the failover: one run (one token) sent each write once, and each was answered.
    const reader = createRedis(redisSettingsFrom(lab.env).settings, 'producer');
    reader.on('error', () => undefined);
    try {
      const journal = createPlanStore(reader, { prefix }).journal(planId);
      const steps = [await journal.get(0), await journal.get(1)];
      expect(steps.map((e) => e?.state)).toEqual(['done', 'done']);
      const sent = steps.flatMap((e) => e?.writes ?? []);
      expect(sent.map((w) => w.state)).toEqual(['answered', 'answered']);
      expect(new Set(sent.map((w) => w.run)).size).toBe(1);
    } finally {
      reader.disconnect();
    }
    expect(await lab.currentPrimaryPort()).toBe(lab.replica.port);
    expect(await lab.aclDenials(lab.replica.port)).toEqual([]);
  }, 90_000);

  it('a check on its way when the primary dies is queued once on the new primary, under the id it was sent with', async () => {
    const prefix = freshPrefix('failover-inflight');
    const { lab, emulator, runtime, url } = await startServe(prefix);
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 10_000, 50);
    const threadTs = '1700000001.000001';
    // The primary stops answering with the request on the wire, then dies: did it take the job? The bot cannot know.
    lab.primary.freeze();
    const submitted = runtime.queues.submit('dns-check', { target: 'prod', requestedBy: LAB_USERS.operator, reply: { channel: LAB_CHANNELS.ops, user: LAB_USERS.operator, threadTs } });
    await new Promise((r) => setTimeout(r, 300));
    await lab.primary.kill();
    const { id } = await submitted;
    const posts = () => emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.via === 'chat.postMessage' && m.threadTs === threadTs && !isEvidence(m));
    await waitUntil(() => posts().length >= 1, 30_000, 100);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(posts()).toHaveLength(1);
    expect(posts()[0]?.text).toMatch(/^CRITICAL: API record WIPED/);
    const queue = runtime.queues.queue('dns-check');
    expect((await queue.getJobs(['completed'])).map((j) => j.id)).toEqual([id]);
  }, 90_000);

  it('one that waited longer than its budget for the new primary is told "failing over", and gets nothing else', async () => {
    const prefix = freshPrefix('failover-budget');
    const { lab, emulator } = await startServe(prefix);
    const producer = createRedis(redisSettingsFrom(lab.env).settings, 'producer');
    producer.on('error', () => undefined);
    const impatient = new JobQueues(producer, createRedactor([]), prefix, 2_000, { failover: true, recoveryMs: 1_000 });
    try {
      await waitUntil(() => producer.status === 'ready', 10_000);
      const threadTs = '1700000002.000001';
      lab.primary.freeze();
      const submitted = impatient.submit('dns-check', { target: 'prod', requestedBy: LAB_USERS.operator, reply: { channel: LAB_CHANNELS.ops, user: LAB_USERS.operator, threadTs } });
      await new Promise((r) => setTimeout(r, 300));
      await lab.primary.kill();
      await expect(submitted).rejects.toThrow(FAILING_OVER);
      await waitUntil(() => producer.status === 'ready', 30_000, 100);
      // Time for a resent copy to land and for a worker to run it, were it there.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.threadTs === threadTs)).toEqual([]);
    } finally {
      await impatient.close();
      producer.disconnect();
    }
  }, 90_000);
});

