import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { dispatchCommand } from '../../commands/dispatch.ts';
import type { CommandContext } from '../../src/edge/command-types.ts';
import type { JobData, JobDefinition } from '../../src/engine/job-types.ts';
import { AlertStore } from '../../src/edge/alerts/alert-store.ts';
import { startAlerting } from '../../src/edge/alerts/start-alerting.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { startSlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport } from '../../src/core/report.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { liveMentions } from '../../src/core/mention.ts';

// Real parts: Redis (alert state, silences, the scan queue), BullMQ, the Slack emulator.

const yaml = `
slack: { alertChannel: C0ALERTS }
maas:
  region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:K }
sites:
  site-b: { maas: region-a, rack: { resolver: 127.0.0.1, probe: direct }, vmHosts: { default: { user: ops } } }
  site-c: { maas: region-a }
clusters:
  prod: { maas: region-a }
`;
const { config } = parseConfigText(yaml, { path: 't.yaml', env: { K: 'aaaa:bbbb:cccc' } });
const log = silentLogger();
const redact = createRedactor([]);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const prefix = freshPrefix('acmd');
  const redis: Redis = createRedis(TEST_REDIS_URL, 'worker');
  cleanups.push(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  const store = new AlertStore(redis, prefix);
  const queued: { job: string; data: JobData }[] = [];
  const ctx: CommandContext = {
    config,
    user: 'U0OPS1',
    channel: 'C0OPS',
    alerts: store,
    enqueue: async (job, data) => {
      queued.push({ job, data });
      return String(queued.length);
    },
  };
    // The reply with the bot's own mentions as Slack shows them.
  const run = async (text: string) => {
    const reply = await dispatchCommand(ctx, text);
    return { ...reply, text: liveMentions(reply.text) };
  };
  return { prefix, redis, store, queued, ctx, run };
}

describe('/maas silence', () => {
  it('records who silenced which target until when', async () => {
    const { store, run } = await setup();
    const before = Date.now();
    const reply = await run('silence site-b 2h');
    expect(reply.visibility).toBe('in_channel');
    expect(reply.text).toMatch(/^<@U0OPS1> silenced site-b for 2h \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
    const silence = await store.silenceFor('site-b', Date.now());
    expect(silence).toMatchObject({ target: 'site-b', by: 'U0OPS1' });
    expect(silence!.until - silence!.at).toBe(2 * 3600_000);
    expect(silence!.at).toBeGreaterThanOrEqual(before);
    expect(await store.silenceFor('prod', Date.now())).toBeUndefined();
  });

  it('refuses a target that is not configured, and a bad duration', async () => {
    const { store, run } = await setup();
    expect((await run('silence nowhere 2h')).text).toBe('/maas silence: no site or cluster "nowhere". known sites and clusters: prod, site-b, site-c');
    expect((await run('silence site-b soon')).text).toMatch(/"soon" is not a duration/);
    expect((await run('silence site-b 30d')).text).toMatch(/at most 7d/);
    expect((await run('silence site-b')).text).toMatch(/^Usage: \/maas silence/);
    expect(await store.silences(Date.now())).toEqual([]);
  });

  it('off lifts it; all silences every target', async () => {
    const { store, run } = await setup();
    await run('silence all 1h');
    expect((await store.silences(Date.now())).map((s) => s.target)).toEqual(['prod', 'site-b', 'site-c']);
    expect((await run('silence prod off')).text).toBe('<@U0OPS1> lifted the silence on prod: its alerts are posted again.');
    expect((await store.silences(Date.now())).map((s) => s.target)).toEqual(['site-b', 'site-c']);
  });
});

describe('/maas alerts', () => {
  it('lists open alerts with their age, and silences', async () => {
    const { store, run } = await setup();
    expect((await run('alerts')).text).toBe('No open alerts.');
    const now = Date.now();
    await store.save(
      {
        id: 'a1',
        check: 'mac-diff',
        target: 'site-b',
        kind: 'drift',
        state: 'open',
        openedAt: now - 25 * 60_000,
        lastSeenAt: now,
        reopened: 0,
        status: 'critical',
        verdict: '3 machines have drifted MACs',
        findings: [],
        members: [1, 2, 3].map((i) => ({ fingerprint: `f${i}`, code: 'MAC_DRIFT', subject: `n${i}`, digest: '', since: now })),
      },
      60_000,
    );
    await run('silence prod 1h');
    const reply = await run('alerts');
    expect(reply.visibility).toBe('ephemeral');
    expect(reply.text).toBe(
      ['1 open alert, oldest first:', '• CRITICAL mac-diff site-b: 3 machines have drifted MACs · open 25m · 3 findings', 'Silenced:', '• prod by <@U0OPS1> for 1h more'].join('\n'),
    );
  });

  it('says so when this process has no alert state', async () => {
    const { ctx } = await setup();
    const { alerts: _none, ...without } = ctx;
    expect((await dispatchCommand(without, 'alerts')).text).toMatch(/not available in this process/);
  });
});

describe('/maas scan', () => {
  it('queues one scan per applicable check, with no reply target', async () => {
    const { queued, run } = await setup();
    const reply = await run('scan site-b');
    expect(queued).toEqual([
      { job: 'scan', data: { check: 'resolver-check', target: 'site-b', requestedBy: 'U0OPS1' } },
      { job: 'scan', data: { check: 'mac-diff', target: 'site-b', requestedBy: 'U0OPS1' } },
    ]);
    expect(reply.text).toBe('Scanning resolver-check site-b, mac-diff site-b: anything found is posted or updated in <#C0ALERTS>.');
    await run('scan prod');
    expect(queued[2]).toEqual({ job: 'scan', data: { check: 'dns-check', target: 'prod', requestedBy: 'U0OPS1' } });
  });

  it('refuses unknown targets and checks, and says when there is nothing to scan', async () => {
    const { queued, run } = await setup();
    expect((await run('scan nowhere')).text).toMatch(/no site or cluster "nowhere"/);
    expect((await run('scan site-b dns-lookup')).text).toMatch(/"dns-lookup" is not a check/);
    expect((await run('scan site-c')).text).toMatch(/nothing to scan on site-c/);
    expect(queued).toEqual([]);
  });

  it('a queued scan runs on the scan worker and posts its alert', async () => {
    const { prefix, redis, ctx } = await setup();
    const slack = await startSlackEmulator();
    cleanups.push(() => slack.close());
    const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5 });
    cleanups.push(() => sender.close(1000));
    const fake: JobDefinition = {
      name: 'mac-diff',
      run: async (_c, data) => [
        finishReport({ kind: 'mac-diff', target: data.target, verdict: '1 machine has a drifted MAC', findings: [{ code: 'MAC_DRIFT', severity: 'critical', subject: 'n1', summary: 'n1 drifted', evidence: {} }] }, new Date()),
      ],
    };
    const alerting = await startAlerting({ connection: redis, prefix, config, adapters: {} as Adapters, sender, log, redact, schedule: false, findJob: (n) => (n === 'mac-diff' ? fake : undefined) });
    cleanups.push(() => alerting.close());
    const producer = createRedis(TEST_REDIS_URL, 'producer');
    const queues = new JobQueues(producer, redact, prefix);
    cleanups.push(async () => {
      await queues.close();
      producer.disconnect();
    });
    await dispatchCommand({ ...ctx, enqueue: (job, data) => queues.enqueue(job, data) }, 'scan site-b mac-diff');
    const [alert] = await slack.waitFor((s) => (s.channelMessages('C0ALERTS').length ? s.channelMessages('C0ALERTS') : undefined));
    expect(alert!.text).toBe('CRITICAL: 1 machine has a drifted MAC (mac-diff site-b)');
  });
});
