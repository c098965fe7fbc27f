import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { loadConfig, type ClusterConfig } from '../../src/core/config.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import type { KubeClient } from '../../src/adapters/kube/types.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { createRealAdapters } from '../../src/adapters/real-adapters.ts';
import { writeLabConfigVariant, type WrittenConfig } from '../../bench/lib/lab-config.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

const OPS2 = 'C0OPS2';

/**
 * Identical checks under load, through the whole path: signed commands → Bolt → Redis → worker →
 * simulators → Slack emulator. The bot and the worker are separate runtimes on one prefix.
 */
describe('dedup: identical checks run once and every requester gets the result', () => {
  let world: LabWorld;
  let emulator: SlackEmulator;
  let config: WrittenConfig;
  let redis: Redis;
  let bot: Runtime | undefined;
  let worker: Runtime | undefined;
  let prefix: string;
  let appUrl: string;

  beforeAll(async () => {
    world = await startLabWorld();
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, OPS2, LAB_CHANNELS.alerts] });
    config = writeLabConfigVariant(world, (doc) => {
      doc.slack.commandChannels = [LAB_CHANNELS.ops, OPS2];
    });
    redis = new Redis(TEST_REDIS_URL);
  });

  afterEach(async () => {
    await bot?.close();
    await worker?.close();
    bot = worker = undefined;
    await deletePrefix(redis, prefix);
  });

  afterAll(async () => {
    redis?.disconnect();
    await emulator?.close();
    await world?.close();
    config?.remove();
  });

  function runtimeEnv() {
    return { ...world.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: TEST_REDIS_URL };
  }

  async function start(role: 'bot' | 'worker', adapters?: Adapters): Promise<Runtime> {
    const loaded = loadConfig({ path: config.path, env: world.env });
    return startRuntime({ role, loaded, env: runtimeEnv(), prefix, host: '127.0.0.1', log: silentLogger(), ...(adapters ? { adapters } : {}) });
  }

  async function startBot(): Promise<void> {
    prefix = freshPrefix('dedup');
    bot = await start('bot');
    appUrl = `http://127.0.0.1:${bot.port}`;
  }

  /** Sends the commands at once; resolves with each one's ack text (the answer through its response_url). */
  async function commands(list: { text: string; user: string; channel: string }[]): Promise<string[]> {
    const sent = await Promise.all(list.map((c) => emulator.sendSlashCommand({ appUrl, ...c })));
    for (const s of sent) expect(s.status).toBe(200);
    return Promise.all(
      sent.map(async (s) => (await emulator.waitFor((e) => e.answersTo(s.responseUrl)[0], { timeoutMs: 10_000, description: 'the ack' })).text),
    );
  }

  /** Results: a "running" answer the result edited (one message per command), or a new post where none could be edited. */
  function resultsAfter(seq: number) {
    return [LAB_CHANNELS.ops, OPS2].flatMap((channel) => emulator.resultsIn(channel)).filter((m) => m.seq > seq);
  }

  function lastSeq(): number {
    return Math.max(0, ...emulator.messages.map((m) => m.seq));
  }

  it('twelve mac-diffs of one site from two channels: one job, one run of MAAS and SSH requests, one result per channel', async () => {
    await startBot();
    const seq = lastSeq();
    world.maas.resetCalls();
    const sshBefore = world.vmHosts.map((h) => h.ssh.commands.length);
    const asks = [
      ...Array.from({ length: 5 }, () => ({ text: 'mac-diff site-b', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops })),
      ...Array.from({ length: 3 }, () => ({ text: 'mac-diff site-b', user: LAB_USERS.approver, channel: LAB_CHANNELS.ops })),
      ...Array.from({ length: 4 }, () => ({ text: 'mac-diff site-b', user: LAB_USERS.approver, channel: OPS2 })),
    ];
    // No worker yet: every request arrives while the first one's job is queued.
    const acks = await commands(asks);
    expect(acks.filter((a) => a.includes('running, the result will be posted here'))).toHaveLength(1);
    expect(acks.filter((a) => /joined the same check .* still queued; its result will be posted here/.test(a))).toHaveLength(11);
    const queue = new Queue(queueNameFor('mac-diff'), { connection: redis, prefix });
    expect(await queue.getJobCounts('waiting', 'active', 'completed')).toEqual({ waiting: 1, active: 0, completed: 0 });

    worker = await start('worker');
    await emulator.waitFor(() => resultsAfter(seq).length >= 2, { timeoutMs: 20_000, description: 'the results in both channels' });
    await waitUntil(async () => (await queue.getJobCounts('completed')).completed === 1);
    const results = resultsAfter(seq);
    expect(results.map((m) => m.channel).sort()).toEqual([LAB_CHANNELS.ops, OPS2].sort());
    for (const m of results) expect(m.text).toMatch(/^CRITICAL: 9 of 12 machines at site-b have drifted MACs/);
    // One run: whoami (at most once, it is kept per region), machines and power parameters, and the drift's two witnesses.
    expect(world.maas.calls.filter((c) => c.op === 'whoami').length).toBeLessThanOrEqual(1);
    expect(world.maas.calls.filter((c) => c.op !== 'whoami').map((c) => `${c.method} ${c.path}${c.op ? `?op=${c.op}` : ''}`).sort()).toEqual(
      ['GET /MAAS/api/2.0/machines/', 'GET /MAAS/api/2.0/machines/?op=power_parameters', 'GET /MAAS/api/2.0/discovery/?op=by_unknown_mac', 'GET /MAAS/api/2.0/events/?op=query'].sort(),
    );
    const siteB = world.vmHosts.filter((h) => h.ssh.host.startsWith('127.0.20.'));
    expect(siteB.map((h) => h.ssh.commands.length - (sshBefore[world.vmHosts.indexOf(h)] ?? 0))).toEqual([1, 1]);
    expect(await queue.getJobCounts('waiting', 'active', 'completed', 'failed')).toEqual({ waiting: 0, active: 0, completed: 1, failed: 0 });
    // The run closed with its job: no waiters are left behind, and BullMQ freed the deduplication id for the next request.
    expect(await redis.keys(`${prefix}:dedup:waiters:*`)).toEqual([]);
    expect(await redis.keys(`${prefix}:*:de:*`)).toEqual([]);
    await queue.close();
  });

  it('a request during the run joins the running check and says so; one after the result starts a new run', async () => {
    await startBot();
    const gate = deferred();
    let kubeReads = 0;
    const real = createRealAdapters(loadConfig({ path: config.path, env: world.env }).config);
    // Holds the check inside its first read until the test lets it go: "running" without timing.
    const gated: Adapters = {
      ...real,
      kube: (cluster: ClusterConfig): KubeClient => {
        const client = real.kube(cluster);
        return new Proxy(client, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (prop !== 'getMaasCluster' || typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              kubeReads += 1;
              await gate.promise;
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      },
    };
    worker = await start('worker', gated);
    const seq = lastSeq();
    world.maas.resetCalls();
    const [first] = await commands([{ text: 'dns-check prod', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops }]);
    expect(first).toContain('running, the result will be posted here');
    // Inside its first read: BullMQ has moved the job to active, and stamped when it started.
    await waitUntil(() => kubeReads === 1);
    const [second] = await commands([{ text: 'dns-check prod', user: LAB_USERS.approver, channel: LAB_CHANNELS.ops }]);
    expect(second).toMatch(new RegExp(`joined the same check <@${LAB_USERS.operator}> asked for .*, running since .*It started before your request`));
    gate.resolve();
    await emulator.waitFor(() => resultsAfter(seq).length >= 1, { timeoutMs: 20_000, description: 'the shared result' });
    expect(kubeReads).toBe(1);
    expect(world.maas.calls.filter((c) => c.path.endsWith('/dnsresources/'))).toHaveLength(1);

    const [third] = await commands([{ text: 'dns-check prod', user: LAB_USERS.approver, channel: LAB_CHANNELS.ops }]);
    expect(third).toContain('running, the result will be posted here');
    await emulator.waitFor(() => resultsAfter(seq).length >= 2, { timeoutMs: 20_000, description: 'the second result' });
    expect(kubeReads).toBe(2);
    const results = resultsAfter(seq);
    expect(results).toHaveLength(2);
    for (const m of results) expect(m.text).toMatch(/^CRITICAL: API record WIPED/);
  });

  it('repairs are never shared: two fix-macs requests are two jobs', async () => {
    await startBot();
    const reply = { channel: LAB_CHANNELS.ops, user: LAB_USERS.operator };
    const a = await bot!.queues.submit('fix-macs', { target: 'site-b', reply, requestedBy: LAB_USERS.operator });
    const b = await bot!.queues.submit('fix-macs', { target: 'site-b', reply, requestedBy: LAB_USERS.operator });
    expect(a.joined).toBeUndefined();
    expect(b.joined).toBeUndefined();
    expect(a.id).not.toBe(b.id);
    expect(bot!.queues.deduplicates('fix-macs')).toBe(false);
    expect(bot!.queues.deduplicates('fix-dns')).toBe(false);
    expect(bot!.queues.deduplicates('mac-diff')).toBe(true);
    const queue = new Queue(queueNameFor('fix-macs'), { connection: redis, prefix });
    expect((await queue.getJobCounts('waiting')).waiting).toBe(2);
    await queue.close();
  });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
