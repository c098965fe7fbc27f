import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createScanJob } from '../../jobs/scan.ts';
import type { JobContext, JobDefinition } from '../../src/engine/job-types.ts';
import { AlertStore } from '../../src/edge/alerts/alert-store.ts';
import type { AuditInput } from '../../src/engine/audit/audit-entry.ts';
import type { AuditLog } from '../../src/engine/audit/audit-log.ts';
import { AlertReconciler } from '../../src/edge/alerts/reconcile.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { startSlackEmulator, type EmulatedMessage, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Finding } from '../../src/core/report.ts';
import { createSlackGateway, type SlackGateway } from '../../src/edge/slack/gateway.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// Real parts: Redis (alert state, locks), the Slack Web API emulator reached by the paced sender's
// WebClient. The check is an in-test mac-diff whose findings each test changes between scans.

const ALERTS = 'C0ALERTS';
const yaml = `
slack: { alertChannel: ${ALERTS} }
maas:
  region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:MAAS_KEY }
sites:
  site-b: { maas: region-a, vmHosts: { default: { user: ops } } }
`;
const { config } = parseConfigText(yaml, { path: 't.yaml', env: { MAAS_KEY: 'consumerkey1:tokenkey1:tokensecret1' } });
const redact = createRedactor(['tokensecret1']);
const log = silentLogger();
const ctx: JobContext = { config, adapters: {} as Adapters, log };

const drift = (i: number, live = 'bb'): Finding => ({
  code: 'MAC_DRIFT',
  severity: 'critical',
  subject: `node-${i}`,
  summary: `node-${i}: MAAS records aa, the VM has ${live}`,
  evidence: { hostname: `node-${i}`, recorded: 'aa', live },
});
const drifts = (n: number) => Array.from({ length: n }, (_, i) => drift(i + 1));

/** The site as the fake mac-diff sees it; tests change it between scans. */
class FakeMacDiff {
  findings: Finding[] = [];
  throws: Error | undefined;
  runs = 0;
  delayMs = 0;
  readonly definition: JobDefinition = {
    name: 'mac-diff',
    run: async (_ctx, data) => {
      this.runs++;
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.throws) throw this.throws;
      const verdict = this.findings.length ? `${this.findings.length} machines have drifted MACs` : 'every MAC matches';
      return [finishReport({ kind: 'mac-diff', target: data.target, verdict, findings: [...this.findings] }, new Date())];
    },
  };
}

interface Runner {
  redis: Redis;
  sender: SlackGateway;
  store: AlertStore;
  /** A scheduled scan, with `requestedBy` one someone asked for, with `trigger` one a watch queued. */
  scan(requestedBy?: string, trigger?: string[]): Promise<unknown>;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function lab(options: { quietMs?: number; audit?: AuditInput[] } = {}) {
  const prefix = freshPrefix('alerts');
  const slack = await startSlackEmulator();
  const admin = createRedis(TEST_REDIS_URL, 'worker');
  cleanups.push(async () => {
    await slack.close();
    await deletePrefix(admin, prefix);
    admin.disconnect();
  });
  const fake = new FakeMacDiff();
  const clock = { now: Date.now() };

  /** A worker process: its own Redis connection, sender and reconciler, sharing Redis state. */
  function runner(): Runner {
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5, retryConfig: { retries: 10, minTimeout: 0, maxTimeout: 0 } });
    const store = new AlertStore(redis, prefix);
    const audit = options.audit ? ({ record: async (e: AuditInput) => void options.audit!.push(e) } as unknown as AuditLog) : undefined;
    const reconciler = new AlertReconciler({ store, sender, channel: ALERTS, log, quietMs: options.quietMs ?? 600_000, now: () => clock.now, ...(audit ? { audit } : {}) });
    const job = createScanJob({ store, reconciler, redact, findJob: (n) => (n === 'mac-diff' ? fake.definition : undefined) });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await sender.close(2000);
      redis.disconnect();
    };
    cleanups.push(close);
    return { redis, sender, store, scan: (requestedBy, trigger) => job.run(ctx, { check: 'mac-diff', target: 'site-b', ...(requestedBy ? { requestedBy } : {}), ...(trigger ? { trigger } : {}) }), close };
  }
  return { slack, fake, clock, runner, prefix };
}

const topLevel = (slack: SlackEmulator): EmulatedMessage[] => slack.channelMessages(ALERTS).filter((m) => !m.threadTs);
/** The alert's thread lines for its transitions; the evidence replies posted with it are `evidence`. */
const thread = (slack: SlackEmulator, ts: string): EmulatedMessage[] => slack.channelMessages(ALERTS).filter((m) => m.threadTs === ts && !m.text.startsWith('Evidence for '));
const evidence = (slack: SlackEmulator, ts: string): EmulatedMessage[] => slack.channelMessages(ALERTS).filter((m) => m.threadTs === ts && m.text.startsWith('Evidence for '));
/** The epoch second of the alert's "last checked" date token. */
const lastChecked = (m: EmulatedMessage) => Number(/last checked <!date\^(\d+)\^/.exec(JSON.stringify(m.blocks))?.[1] ?? NaN);
const actionIds = (m: EmulatedMessage | undefined) =>
  (m?.blocks ?? []).flatMap((b) => ((b as { type: string }).type === 'actions' ? (b as { elements: { action_id: string }[] }).elements.map((e) => e.action_id) : []));

describe('drift alerts on real Redis and the Slack emulator', () => {
  it('records opened, changed and resolved in the audit trail, and nothing for an unchanged scan', async () => {
    const audit: AuditInput[] = [];
    const { fake, runner } = await lab({ audit });
    const w = runner();
    fake.findings = drifts(2);
    await w.scan();
    await w.scan();
    fake.findings = drifts(3);
    await w.scan();
    fake.findings = [];
    await w.scan();
    expect(audit.map((e) => [e.kind, e.action, e.target, e.outcome])).toEqual([
      ['alert', 'mac-diff', 'site-b', 'opened'],
      ['alert', 'mac-diff', 'site-b', 'changed'],
      ['alert', 'mac-diff', 'site-b', 'resolved'],
    ]);
  });

  it('names in the audit trail who queued the scan: the schedule, a watch that saw a change, or the person who asked', async () => {
    const audit: AuditInput[] = [];
    const { fake, runner } = await lab({ audit });
    const w = runner();
    fake.findings = drifts(2);
    await w.scan();
    fake.findings = drifts(3);
    await w.scan(undefined, ['VM host 127.0.0.2: domain "site-b-node3" undefined and defined again']);
    fake.findings = [];
    await w.scan('U0OPS1');
    expect(audit.map((e) => [e.outcome, e.actor])).toEqual([
      ['opened', 'scheduler'],
      ['changed', 'watch'],
      ['resolved', 'U0OPS1'],
    ]);
  });

  it('posts once per incident, updates in place while it lasts, and resolves on recovery', async () => {
    const { slack, fake, clock, runner } = await lab();
    const w = runner();
    fake.findings = drifts(3);
    for (let i = 0; i < 7; i++) {
      await w.scan();
      clock.now += 60_000;
    }
    expect(topLevel(slack)).toHaveLength(1);
    const alert = topLevel(slack)[0]!;
    expect(alert.text).toBe('CRITICAL: 3 machines have drifted MACs (mac-diff site-b)');
    expect(actionIds(alert)).toEqual(['alert_plan_fix', 'alert_recheck', 'alert_silence']);
    // Six scheduled scans that found the same: one edit, when its "last checked" was 5 minutes old (DEFAULT_REFRESH_MS).
    expect(alert.updates).toHaveLength(1);
    expect(lastChecked(alert)).toBe(Math.floor((clock.now - 2 * 60_000) / 1000));
    expect(thread(slack, alert.ts)).toHaveLength(0);
    // Posted once with the alert: its findings whole, in its thread; five scans add none.
    expect(evidence(slack, alert.ts)).toHaveLength(1);
    expect(JSON.stringify(evidence(slack, alert.ts)[0]!.blocks)).toContain('`MAC_DRIFT` *critical*');
    expect(JSON.stringify(alert.blocks)).toContain('Open for 5m');
    expect((await w.store.open()).map((a) => [a.check, a.target, a.kind])).toEqual([['mac-diff', 'site-b', 'drift']]);

    clock.now += 60_000;
    fake.findings = [];
    await w.scan();
    expect(topLevel(slack)).toHaveLength(1);
    expect(alert.text).toBe('RESOLVED after 8m: 3 machines have drifted MACs (mac-diff site-b)');
    expect(actionIds(alert)).toEqual([]);
    expect(thread(slack, alert.ts).map((m) => m.text)).toEqual([expect.stringMatching(/Resolved: .* It lasted 8m\./)]);
    expect(await w.store.open()).toEqual([]);

    await w.scan();
    expect(alert.updates).toHaveLength(2);
    // The alert, its evidence reply, the resolved note: nothing more for a scan that changes nothing.
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(3);
  });

  it('a scan someone asked for edits the alert at once though it found the same; a scheduled one waits for the refresh', async () => {
    const { slack, fake, clock, runner } = await lab();
    const w = runner();
    fake.findings = drifts(3);
    await w.scan();
    const alert = topLevel(slack)[0]!;
    clock.now += 30_000;
    await w.scan();
    expect(alert.updates).toHaveLength(0);
    clock.now += 30_000;
    await w.scan('U0OPS1');
    expect(alert.updates).toHaveLength(1);
    expect(lastChecked(alert)).toBe(Math.floor(clock.now / 1000));
    expect(topLevel(slack)).toHaveLength(1);
  });

  it('a scan someone asked for while another runs waits for it and then runs; a scheduled one is skipped', async () => {
    const { fake, runner } = await lab();
    const w = runner();
    fake.findings = drifts(3);
    fake.delayMs = 150;
    await Promise.all([w.scan(), w.scan('U0OPS1')]);
    expect(fake.runs).toBe(2);
    await Promise.all([w.scan(), w.scan()]);
    expect(fake.runs).toBe(3);
  });

  it('a site-wide storm of 12 drifted machines is one message counting them, its thread listing them', async () => {
    const { slack, fake, runner } = await lab();
    fake.findings = drifts(12);
    await runner().scan();
    expect(topLevel(slack)).toHaveLength(1);
    expect(JSON.stringify(topLevel(slack)[0]!.blocks)).toContain('12 findings (`MAC_DRIFT` ×12)');
    const listed = JSON.stringify(evidence(slack, topLevel(slack)[0]!.ts).map((m) => m.blocks));
    for (let i = 1; i <= 12; i++) expect(listed).toContain(`— node-${i}`);
  });

  it('notes a change of evidence in the thread: a 10th machine drifts, one changes its MAC', async () => {
    const { slack, fake, runner } = await lab();
    const w = runner();
    fake.findings = drifts(9);
    await w.scan();
    fake.findings = [...drifts(9), drift(10)];
    await w.scan();
    fake.findings = [drift(1, 'cc'), ...drifts(10).slice(1)];
    await w.scan();
    await w.scan();
    const [alert] = topLevel(slack);
    expect(topLevel(slack)).toHaveLength(1);
    const notes = thread(slack, alert!.ts).map((m) => m.text);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain('1 new: `MAC_DRIFT` node-10');
    expect(notes[1]).toContain('evidence changed for 1: `MAC_DRIFT` node-1');
    expect(alert!.text).toBe('CRITICAL: 10 machines have drifted MACs (mac-diff site-b)');
  });

  it('re-opens a flapping alert within the quiet period instead of posting again', async () => {
    const { slack, fake, clock, runner } = await lab({ quietMs: 10 * 60_000 });
    const w = runner();
    fake.findings = drifts(2);
    await w.scan();
    clock.now += 60_000;
    fake.findings = [];
    await w.scan();
    clock.now += 3 * 60_000;
    fake.findings = drifts(2);
    await w.scan();
    expect(topLevel(slack)).toHaveLength(1);
    const alert = topLevel(slack)[0]!;
    expect(alert.text).toMatch(/^CRITICAL: 2 machines/);
    expect(JSON.stringify(alert.blocks)).toContain('re-opened 1×');
    expect(thread(slack, alert.ts).map((m) => m.text)).toEqual([expect.stringMatching(/^:white_check_mark: Resolved/), expect.stringMatching(/^:repeat: Back after 3m resolved/)]);
    expect((await w.store.open())[0]?.reopened).toBe(1);

    // Gone for longer than the quiet period: a new incident, a new message.
    fake.findings = [];
    await w.scan();
    clock.now += 11 * 60_000;
    fake.findings = drifts(2);
    await w.scan();
    expect(topLevel(slack)).toHaveLength(2);
  });

  it('a target that could not be checked is its own alert, and leaves the drift alert open', async () => {
    const { slack, fake, runner } = await lab();
    const w = runner();
    fake.findings = drifts(2);
    await w.scan();
    fake.throws = new Error('MAAS at region-a did not answer');
    await w.scan();
    await w.scan();
    const [driftAlert, probeAlert] = topLevel(slack);
    expect(topLevel(slack)).toHaveLength(2);
    expect(probeAlert!.text).toBe('Could not check site-b (mac-diff): Could not check site-b: MAAS at region-a did not answer');
    expect(JSON.stringify(probeAlert!.blocks)).toContain('COULD NOT CHECK');
    expect(actionIds(probeAlert)).toEqual(['alert_recheck', 'alert_silence']);
    expect(driftAlert!.text).toMatch(/^CRITICAL/);
    expect(driftAlert!.updates).toHaveLength(0);

    fake.throws = undefined;
    fake.findings = [];
    await w.scan();
    expect(probeAlert!.text).toMatch(/^RESOLVED after/);
    expect(driftAlert!.text).toMatch(/^RESOLVED after/);
    expect(topLevel(slack)).toHaveLength(2);
  });

  it('a silenced target is tracked but not posted; lifting the silence posts it', async () => {
    const { slack, fake, clock, runner } = await lab();
    const w = runner();
    await w.store.silence({ target: 'site-b', by: 'U0LEAD1', at: clock.now, until: clock.now + 3600_000 });
    fake.findings = drifts(3);
    await w.scan();
    await w.scan();
    expect(topLevel(slack)).toHaveLength(0);
    expect(await w.store.open()).toHaveLength(1);

    await w.store.unsilence('site-b');
    await w.scan();
    expect(topLevel(slack)).toHaveLength(1);

    // Silenced mid-incident: the next scan shows it though it found the same.
    await w.store.silence({ target: 'site-b', by: 'U0LEAD1', at: clock.now, until: clock.now + 3600_000 });
    await w.scan();
    const [alert] = topLevel(slack);
    expect(JSON.stringify(alert!.blocks)).toContain('silenced by <@U0LEAD1>');
    // The message still updates in place, but the thread stays quiet.
    fake.findings = drifts(4);
    await w.scan();
    expect(topLevel(slack)).toHaveLength(1);
    expect(alert!.text).toMatch(/^CRITICAL: 4 machines/);

    // An expired silence no longer mutes.
    clock.now += 2 * 3600_000;
    fake.findings = drifts(5);
    await w.scan();
    expect(thread(slack, alert!.ts)).toHaveLength(1);
  });

  it('two workers scanning the same target at once post one alert', async () => {
    const { slack, fake, runner } = await lab();
    const [a, b] = [runner(), runner()];
    fake.findings = drifts(3);
    fake.delayMs = 200;
    await Promise.all([a.scan(), b.scan()]);
    expect(fake.runs).toBe(1);
    expect(topLevel(slack)).toHaveLength(1);

    // Even when both get to reconcile (one after the other), the second updates.
    fake.delayMs = 0;
    fake.findings = drifts(4);
    await Promise.all([a.scan(), b.scan()].map((p) => p.then(() => undefined)));
    await a.scan();
    expect(topLevel(slack)).toHaveLength(1);
  });

  it('reconciles of one target are serialised across processes: one post', async () => {
    const { slack, prefix } = await lab();
    const reports = [finishReport({ kind: 'mac-diff', target: 'site-b', verdict: '3 machines have drifted MACs', findings: drifts(3) }, new Date())];
    const reconcilers = [0, 1, 2].map(() => {
      const redis = createRedis(TEST_REDIS_URL, 'worker');
      const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5, retryConfig: { retries: 10, minTimeout: 0, maxTimeout: 0 } });
      cleanups.push(async () => {
        await sender.close(1000);
        redis.disconnect();
      });
      return new AlertReconciler({ store: new AlertStore(redis, prefix), sender, channel: ALERTS, log });
    });
    const outcomes = await Promise.all(reconcilers.map((r) => r.reconcile('mac-diff', 'site-b', reports)));
    expect(outcomes.map((o) => o[0]!.event).sort()).toEqual(['opened', 'unchanged', 'unchanged']);
    expect(topLevel(slack)).toHaveLength(1);
    // The two that found it open had nothing the message does not already show.
    expect(topLevel(slack)[0]!.updates).toHaveLength(0);
  });

  it('a worker restarted mid-incident updates the open alert instead of posting again', async () => {
    const { slack, fake, runner } = await lab();
    const before = runner();
    fake.findings = drifts(3);
    await before.scan();
    await before.close();

    const after = runner();
    await after.scan('U0OPS1');
    fake.findings = drifts(4);
    await after.scan();
    expect(topLevel(slack)).toHaveLength(1);
    const [alert] = topLevel(slack);
    expect(alert!.updates).toHaveLength(2);
    expect(alert!.text).toMatch(/^CRITICAL: 4 machines/);
    expect(thread(slack, alert!.ts)).toHaveLength(1);
  });

  it('a post Slack refused is made on the next scan; a deleted message is posted anew', async () => {
    const { slack, fake, runner } = await lab();
    const w = runner();
    slack.rateLimitNext(11, 0, 'chat.postMessage');
    fake.findings = drifts(1);
    await w.scan();
    expect(topLevel(slack)).toHaveLength(0);
    await w.scan();
    expect(topLevel(slack)).toHaveLength(1);

    topLevel(slack)[0]!.deleted = true;
    await w.scan('U0OPS1');
    expect(topLevel(slack).filter((m) => !m.deleted)).toHaveLength(1);
    expect((await w.store.open())[0]?.ts).toBe(topLevel(slack)[1]!.ts);
  });

  it('keeps secrets out of Slack and out of Redis', async () => {
    const { slack, fake, runner, prefix } = await lab();
    const w = runner();
    fake.findings = [{ ...drift(1), summary: 'node-1 answered with tokensecret1' }];
    await w.scan();
    expect(JSON.stringify(slack.calls)).not.toContain('tokensecret1');
    const keys = await w.redis.keys(`${prefix}:alerts:*`);
    const values = await Promise.all(keys.map((k) => w.redis.type(k).then((t) => (t === 'string' ? w.redis.get(k) : ''))));
    expect(values.join('')).not.toContain('tokensecret1');
    expect(values.join('')).toContain('[redacted]');
  });
});
