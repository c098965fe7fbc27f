import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import { startAlerting, type Alerting } from '../../src/edge/alerts/start-alerting.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { queueNameFor } from '../../src/engine/queue/queue-names.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { schedulerIdFor, syncSchedulers } from '../../src/edge/alerts/schedulers.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Finding } from '../../src/core/report.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// Real parts: Redis, BullMQ job schedulers firing every few hundred ms, BullMQ workers running the
// scan job, the Slack Web API emulator. The check is an in-test mac-diff changed between scans.

const ALERTS = 'C0ALERTS';
const log = silentLogger();
const redact = createRedactor([]);

function configWith(options: { sites?: string[]; clusters?: string[]; schedules?: string }): Config {
  const sites = (options.sites ?? []).map((s) => `  ${s}: { maas: region-a, rack: { resolver: 127.0.0.1, probe: direct }, vmHosts: { default: { user: ops } } }`).join('\n');
  const clusters = (options.clusters ?? []).map((c) => `  ${c}: { maas: region-a }`).join('\n');
  const yaml = `
slack: { alertChannel: ${ALERTS} }
maas:
  region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:K }
${sites ? `sites:\n${sites}` : ''}
${clusters ? `clusters:\n${clusters}` : ''}
schedules: ${options.schedules ?? '{}'}
`;
  return parseConfigText(yaml, { path: 't.yaml', env: { K: 'aaaa:bbbb:cccc' } }).config;
}

const drift = (i: number): Finding => ({ code: 'MAC_DRIFT', severity: 'critical', subject: `node-${i}`, summary: `node-${i} drifted`, evidence: { i } });

class FakeMacDiff {
  findings: Finding[] = [];
  runs = 0;
  active = 0;
  maxActive = 0;
  delayMs = 0;
  readonly definition: JobDefinition = {
    name: 'mac-diff',
    run: async (_ctx, data) => {
      this.runs++;
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      try {
        if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
        const verdict = this.findings.length ? `${this.findings.length} machines have drifted MACs` : 'every MAC matches';
        return [finishReport({ kind: 'mac-diff', target: data.target, verdict, findings: [...this.findings] }, new Date())];
      } finally {
        this.active--;
      }
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function lab() {
  const prefix = freshPrefix('sched');
  const admin = createRedis(TEST_REDIS_URL, 'worker');
  const queue = new Queue(queueNameFor('scan'), { connection: admin, prefix });
  const slack = await startSlackEmulator();
  cleanups.push(async () => {
    await queue.close();
    await slack.close();
    await deletePrefix(admin, prefix);
    admin.disconnect();
  });
  const fake = new FakeMacDiff();

  /** One worker process: its own connection and sender, the scan worker and the schedulers. */
  async function worker(config: Config): Promise<Alerting & { redis: Redis }> {
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5 });
    const alerting = await startAlerting({
      connection: redis,
      prefix,
      config,
      adapters: {} as Adapters,
      sender,
      log,
      redact,
      findJob: (n) => (n === 'mac-diff' ? fake.definition : undefined),
      // Scans every few hundred ms: an unchanged alert's "last checked" is refreshed at most once a second.
      refreshMs: 1000,
    });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await alerting.close();
      await sender.close(2000);
      redis.disconnect();
    };
    cleanups.push(close);
    return { ...alerting, close, redis };
  }
  return { prefix, admin, queue, slack, fake, worker };
}

const posts = (slack: SlackEmulator) => slack.channelMessages(ALERTS).filter((m) => !m.threadTs);

describe('scan schedulers', () => {
  it('upserting twice, or from two workers at once, leaves one scheduler per (check, target)', async () => {
    const { prefix, admin, queue } = await lab();
    const config = configWith({ sites: ['site-b'], clusters: ['prod'], schedules: '{ dns: 5m, resolver: 5m, macs: 15m }' });
    await syncSchedulers({ connection: admin, prefix, config });
    await Promise.all([syncSchedulers({ connection: admin, prefix, config }), syncSchedulers({ connection: admin, prefix, config })]);
    const schedulers = await queue.getJobSchedulers(0, -1);
    expect(schedulers.map((s) => s.key).sort()).toEqual([
      schedulerIdFor('dns-check', 'prod'),
      schedulerIdFor('mac-diff', 'site-b'),
      schedulerIdFor('resolver-check', 'site-b'),
    ]);
    expect(schedulers.find((s) => s.key === schedulerIdFor('mac-diff', 'site-b'))).toMatchObject({ every: 15 * 60_000, template: { data: { check: 'mac-diff', target: 'site-b' } } });
    // Each scheduler holds exactly one pending job, however often it was upserted.
    const pending = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
    expect(pending.map((j) => j.data.target).sort()).toEqual(['prod', 'site-b', 'site-b']);
  });

  it('removes the schedulers whose config entry went away', async () => {
    const { prefix, admin, queue } = await lab();
    await syncSchedulers({ connection: admin, prefix, config: configWith({ sites: ['site-b', 'site-c'], clusters: ['prod'], schedules: '{ dns: 5m, macs: 15m }' }) });
    expect(await queue.getJobSchedulersCount()).toBe(3);
    const result = await syncSchedulers({ connection: admin, prefix, config: configWith({ sites: ['site-b'], clusters: ['prod'], schedules: '{ macs: 15m }' }) });
    expect(result.removed.sort()).toEqual([schedulerIdFor('dns-check', 'prod'), schedulerIdFor('mac-diff', 'site-c')]);
    expect((await queue.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual([schedulerIdFor('mac-diff', 'site-b')]);
    await syncSchedulers({ connection: admin, prefix, config: configWith({ sites: ['site-b'] }) });
    expect(await queue.getJobSchedulersCount()).toBe(0);
  });

  it('scheduled scans post one alert, keep it current, and resolve it', async () => {
    const { slack, fake, worker } = await lab();
    fake.findings = [drift(1), drift(2)];
    await worker(configWith({ sites: ['site-b'], schedules: '{ macs: 300ms }' }));
    await waitUntil(() => fake.runs >= 4, 10_000);
    expect(posts(slack)).toHaveLength(1);
    await waitUntil(() => (posts(slack)[0]?.updates.length ?? 0) >= 2, 5_000);

    fake.findings = [];
    await slack.waitFor((s) => s.channelMessages(ALERTS)[0]?.text.startsWith('RESOLVED'), { timeoutMs: 5_000 });
    const runsAtResolve = fake.runs;
    await waitUntil(() => fake.runs >= runsAtResolve + 2, 5_000);
    expect(posts(slack)).toHaveLength(1);
    // In the thread: the alert's own evidence, then the one resolve note.
    expect(slack.channelMessages(ALERTS).filter((m) => m.threadTs && !/^Evidence for /.test(m.text))).toHaveLength(1);
  });

  it('a scan still running when the next is due is not started twice', async () => {
    const { fake, worker, slack, queue } = await lab();
    fake.delayMs = 900;
    fake.findings = [drift(1)];
    await worker(configWith({ sites: ['site-b'], schedules: '{ macs: 200ms }' }));
    await waitUntil(() => fake.runs >= 3, 15_000);
    expect(fake.maxActive).toBe(1);
    expect(posts(slack)).toHaveLength(1);
    // The schedule did fire while a scan ran (BullMQ queues the next run when one starts): those were skipped.
    const done = await queue.getJobs(['completed']);
    const skipped = done.filter((j) => Array.isArray(j.returnvalue) && j.returnvalue.length === 0);
    expect(skipped.length).toBeGreaterThan(0);
  });

  it('two workers running schedulers at once still make one alert', async () => {
    const { fake, worker, slack, queue } = await lab();
    fake.findings = [drift(1), drift(2), drift(3)];
    const config = configWith({ sites: ['site-b'], schedules: '{ macs: 250ms }' });
    await Promise.all([worker(config), worker(config)]);
    expect(await queue.getJobSchedulersCount()).toBe(1);
    await waitUntil(() => fake.runs >= 6, 15_000);
    expect(posts(slack)).toHaveLength(1);
    expect(fake.maxActive).toBe(1);
  });

  it('a worker restarted mid-incident updates the open alert, with no second post', async () => {
    const { fake, worker, slack, queue } = await lab();
    fake.findings = [drift(1)];
    const config = configWith({ sites: ['site-b'], schedules: '{ macs: 250ms }' });
    const first = await worker(config);
    await slack.waitFor((s) => posts(s).length === 1, { timeoutMs: 5_000 });
    await first.close();
    const updatesBefore = posts(slack)[0]!.updates.length;

    fake.findings = [drift(1), drift(2)];
    await worker(config);
    await slack.waitFor((s) => s.channelMessages(ALERTS)[0]?.text.startsWith('CRITICAL: 2 machines'), { timeoutMs: 5_000 });
    expect(posts(slack)).toHaveLength(1);
    expect(posts(slack)[0]!.updates.length).toBeGreaterThan(updatesBefore);
    expect(await queue.getJobSchedulersCount()).toBe(1);
  });
});
