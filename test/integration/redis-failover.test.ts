import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config.ts';
import { startLabWorld, LAB_CHANNELS, LAB_USERS, type LabWorld } from '../../src/lab/lab-world.ts';
import { startSentinelLab, type SentinelLab } from '../../src/lab/redis-sentinel-lab.ts';
import { startSlackEmulator, type SlackEmulator } from '../../src/lab/slack-emulator/index.ts';
import { createLogger } from '../../src/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { freshPrefix, waitUntil } from '../helpers/redis.ts';

const FAILING_OVER = 'the job queue is failing over to a new Redis primary, so nothing was queued';

/**
 * A real primary, a replica and three sentinels on loopback; `maas-chatops serve` logs in as the
 * ACL user of docs/operations.md (never as default) and finds the primary through the sentinels.
 * The primary is killed with SIGKILL in the middle of the traffic.
 */
describe('Redis Sentinel failover under load', () => {
  let lab: SentinelLab | undefined;
  let world: LabWorld | undefined;
  let emulator: SlackEmulator | undefined;
  let runtime: Runtime | undefined;
  const logLines: string[] = [];

  afterEach(async () => {
    await runtime?.close();
    await world?.close();
    await emulator?.close();
    await lab?.close();
    runtime = undefined;
    world = undefined;
    emulator = undefined;
    lab = undefined;
    logLines.length = 0;
  }, 60_000);

  async function startServe(prefix: string, extraConfig = '') {
    lab = await startSentinelLab({ prefix, downAfterMs: 1000 });
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
    world = await startLabWorld();
    const loaded = parseConfigText(world.configText + extraConfig, { path: world.configPath, env: world.env });
    const env = { ...world.env, ...lab.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, SLACK_MODE: 'http', PORT: '0' };
    // No redaction on this logger: what the code hands it must already be free of secrets.
    const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }) });
    runtime = await startRuntime({ role: 'serve', loaded, env, prefix, host: '127.0.0.1', log });
    return { lab, emulator, world, runtime, url: `http://127.0.0.1:${runtime.port}` };
  }

  it('a burst of 200 checks across the primary\'s death: each is answered once, a result or "failing over"; /readyz goes 503 and back', async () => {
    const prefix = freshPrefix('failover');
    const { lab, emulator, runtime, url } = await startServe(prefix);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

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
    const postsIn = (i: number) => emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.via === 'chat.postMessage' && m.threadTs === thread(i));
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
    const ack = await emulator.waitFor((e) => e.answersTo(again.responseUrl)[0], { timeoutMs: 15_000 });
    expect(ack.text).toMatch(/asked for `dns-check prod`: running/);
    const result = await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.ops).find((m) => m.seq > seq && m.via === 'chat.postMessage'), { timeoutMs: 20_000 });
    expect(result.text).toMatch(/^CRITICAL: API record WIPED/);
    expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.via === 'chat.postMessage' && m.seq > seq)).toHaveLength(1);
  }, 90_000);

  it('the drift schedulers resume on the new primary and raise no alert twice', async () => {
    const prefix = freshPrefix('failover-scan');
    const { lab, emulator, runtime } = await startServe(prefix, '\nschedules:\n  dns: 1s\n');
    const alertPosts = () => emulator.channelMessages(LAB_CHANNELS.alerts).filter((m) => m.via === 'chat.postMessage');
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
});
