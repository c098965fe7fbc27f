import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Finding } from '../../src/core/report.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import type { JobContext, JobDefinition } from '../../src/engine/job-types.ts';
import type { AlertMessage } from '../../src/edge/alerts/alert-message.ts';
import type { AlertRecord } from '../../src/edge/alerts/alert-record.ts';
import type { AlertSender } from '../../src/edge/alerts/alert-sender.ts';
import { AlertStore } from '../../src/edge/alerts/alert-store.ts';
import { createAlertmanagerJob, type AlertmanagerJobData } from '../../src/edge/alerts/alertmanager-job.ts';
import { AlertReconciler } from '../../src/edge/alerts/reconcile.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// Real parts: Redis (alert records, the reconcile locks), the alert reconciler, the Alertmanager
// job, each with its own connection and store as two workers have. The Slack side is a recorder
// whose first top-level post can be held, as a slow chat.postMessage holds a scan's reconcile.

const ALERTS = 'C0ALERTS';
const { config } = parseConfigText(
  `
slack: { alertChannel: ${ALERTS} }
maas: { region-a: { url: http://127.0.0.1:9/MAAS, apiKey: env:MAAS_KEY } }
sites:
  site-b: { maas: region-a, vmHosts: { default: { user: ops } } }
`,
  { path: 'p.yaml', env: { MAAS_KEY: 'consumerkey1:tokenkey1:tokensecret1' } },
);
const log = silentLogger();
const ctx: JobContext = { config, adapters: {} as Adapters, log };

const servfail: Finding = { code: 'RESOLVER_SERVFAIL', severity: 'critical', subject: 'site-b-rack', summary: 'the rack answers SERVFAIL', evidence: {} };
const macDiff: JobDefinition = {
  name: 'mac-diff',
  run: async (_ctx, data) => [finishReport({ kind: 'mac-diff', target: data.target, verdict: 'every MAC matches', findings: [] }, new Date())],
};
const commissioningTimeout: AlertmanagerJobData = {
  target: 'site-b',
  requestedBy: 'alertmanager',
  groupKey: '{}:{alertname="MaasNodeCommissioningTimeout"}',
  status: 'firing',
  check: 'mac-diff',
  alerts: [{ alertname: 'MaasNodeCommissioningTimeout', fingerprint: 'f1', status: 'firing' }],
};

interface Posted {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
}

/** Records every post and edit; with `hold`, the first top-level post (or thread reply) waits until `release()`. */
function recordingSender(hold?: 'top-level' | 'reply') {
  const posts: Posted[] = [];
  const updates: string[] = [];
  let release: () => void = () => undefined;
  const gate = hold ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  let holding = false;
  let held = false;
  const sender: AlertSender = {
    post: async (channel, message: AlertMessage & { threadTs?: string }) => {
      if (hold && (hold === 'reply') === Boolean(message.threadTs) && !held) {
        held = true;
        holding = true;
        await gate;
        holding = false;
      }
      const ts = `1700000000.${String(posts.length + 1).padStart(6, '0')}`;
      posts.push({ channel, ts, text: message.text, ...(message.threadTs ? { threadTs: message.threadTs } : {}) });
      return { ts };
    },
    update: async (_channel, ts) => {
      updates.push(ts);
    },
  };
  return { sender, posts, updates, release: () => release(), isHolding: () => holding };
}

/** A worker's alert store that says which reconcile locks it asked for. */
class ObservedStore extends AlertStore {
  readonly lockedChecks: string[] = [];
  override reconcileLock(check: string, target: string, ttlMs: number, waitMs: number) {
    this.lockedChecks.push(check);
    return super.reconcileLock(check, target, ttlMs, waitMs);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function twoWorkers() {
  const prefix = freshPrefix('am-place');
  const scanRedis = new Redis(TEST_REDIS_URL);
  const jobRedis = new Redis(TEST_REDIS_URL);
  cleanups.push(async () => {
    await deletePrefix(scanRedis, prefix);
    scanRedis.disconnect();
    jobRedis.disconnect();
  });
  return { scanStore: new AlertStore(scanRedis, prefix), jobStore: new ObservedStore(jobRedis, prefix) };
}

function job(store: AlertStore, sender: AlertSender, check: JobDefinition = macDiff) {
  return createAlertmanagerJob({ store, sender, channel: ALERTS, redact: createRedactor([]), findJob: (name) => (name === 'mac-diff' ? check : undefined) });
}

describe("Alertmanager answers go in the thread of the bot's own open alert for the target", () => {
  it("waits for another check's alert that is being posted for the target, and answers in its thread instead of posting top-level", async () => {
    const { scanStore, jobStore } = twoWorkers();
    const slack = recordingSender('top-level');
    const reconciler = new AlertReconciler({ store: scanStore, sender: slack.sender, channel: ALERTS, log });
    // A resolver-check scan of site-b finds SERVFAIL and is posting its alert: chat.postMessage has not answered yet.
    const scanning = reconciler.reconcile('resolver-check', 'site-b', [finishReport({ kind: 'resolver-check', target: 'site-b', verdict: 'the rack answers SERVFAIL', findings: [servfail] }, new Date())]);
    await waitUntil(slack.isHolding);
    // Meanwhile Alertmanager's commissioning timeout for site-b is answered with mac-diff.
    const answering = job(jobStore, slack.sender).run(ctx, commissioningTimeout);
    let answered = false;
    void answering.then(() => (answered = true));
    await waitUntil(() => answered || jobStore.lockedChecks.includes('resolver-check'));
    slack.release();
    await Promise.all([scanning, answering]);

    const topLevel = slack.posts.filter((p) => !p.threadTs);
    expect(topLevel.map((p) => p.text)).toEqual([expect.stringContaining('resolver-check site-b')]);
    const answer = slack.posts.find((p) => p.text.startsWith('Alertmanager MaasNodeCommissioningTimeout'));
    expect(answer).toMatchObject({ channel: ALERTS, threadTs: topLevel[0]!.ts });
  });

  it("prefers the open alert of the route's own check when the target has several", async () => {
    const { scanStore, jobStore } = twoWorkers();
    const record = (check: string, ts: string, openedAt: number): AlertRecord => ({
      id: `${check}-site-b`,
      check,
      target: 'site-b',
      kind: 'drift',
      state: 'open',
      openedAt,
      lastSeenAt: openedAt,
      reopened: 0,
      status: 'critical',
      verdict: 'drift',
      findings: [],
      members: [],
      channel: ALERTS,
      ts,
    });
    // The resolver-check alert opened first (it is the oldest), the mac-diff one after it.
    await scanStore.save(record('resolver-check', '1700000000.000001', 1), 60_000);
    await scanStore.save(record('mac-diff', '1700000000.000002', 2), 60_000);
    const slack = recordingSender();
    await job(jobStore, slack.sender).run(ctx, commissioningTimeout);
    expect(slack.posts).toEqual([expect.objectContaining({ channel: ALERTS, threadTs: '1700000000.000002' })]);
  });

  it('a group that changes while its first answer is still posting its evidence updates that answer, not a second post', async () => {
    const { scanStore, jobStore } = twoWorkers();
    const drift: Finding = { code: 'MAC_DRIFT', severity: 'critical', subject: 'site-b-node1', summary: 'site-b-node1: MAAS records aa, the VM has bb', evidence: {} };
    const drifting: JobDefinition = {
      name: 'mac-diff',
      run: async (_ctx, data) => [finishReport({ kind: 'mac-diff', target: data.target, verdict: '1 machine has drifted MACs', findings: [drift] }, new Date())],
    };
    const slack = recordingSender('reply');
    // Two workers: the first answer is posted and its evidence is on its way to the thread when the group comes again with a second alert.
    const first = job(scanStore, slack.sender, drifting).run(ctx, commissioningTimeout);
    await waitUntil(slack.isHolding);
    const changed = { ...commissioningTimeout, alerts: [...commissioningTimeout.alerts, { alertname: 'MaasNodeCommissioningTimeout', fingerprint: 'f2', status: 'firing' as const }] };
    const second = job(jobStore, slack.sender, drifting).run(ctx, changed);
    let secondDone = false;
    void second.then(() => (secondDone = true));
    // A job that does not wait for the group answers within milliseconds (a second post); one that
    // waits never finishes while the evidence is held, so the grace is bounded, and only a grace.
    await waitUntil(() => secondDone, 500).catch(() => undefined);
    slack.release();
    await Promise.all([first, second]);
    const topLevel = slack.posts.filter((p) => !p.threadTs);
    expect(topLevel).toHaveLength(1);
    expect(slack.updates).toEqual([topLevel[0]!.ts]);
  });

  it('a group whose check finds something else posts one reply saying what changed, then the new evidence, in its thread; unchanged reruns post nothing there', async () => {
    const { jobStore } = twoWorkers();
    const drift = (node: string, vm: string): Finding => ({ code: 'MAC_DRIFT', severity: 'critical', subject: node, summary: `${node}: MAAS records aa, the VM has ${vm}`, evidence: { vm } });
    let findings = [drift('site-b-node1', 'bb')];
    const drifting: JobDefinition = {
      name: 'mac-diff',
      run: async (_ctx, data) => [finishReport({ kind: 'mac-diff', target: data.target, verdict: `${findings.length} machine(s) have drifted MACs`, findings }, new Date())],
    };
    const slack = recordingSender();
    const run = (fingerprints: string[]) =>
      job(jobStore, slack.sender, drifting).run(ctx, { ...commissioningTimeout, alerts: fingerprints.map((fingerprint) => ({ alertname: 'MaasNodeCommissioningTimeout', fingerprint, status: 'firing' as const })) });
    await run(['f1']);
    const [answer] = slack.posts.filter((p) => !p.threadTs);
    const thread = () => slack.posts.filter((p) => p.threadTs === answer!.ts);
    const firstEvidence = thread().length;
    expect(firstEvidence).toBeGreaterThan(0);

    // The group grows and the check now sees a second machine drifted, and the first one's VM moved on.
    findings = [drift('site-b-node1', 'cc'), drift('site-b-node2', 'dd')];
    await run(['f1', 'f2']);
    const replies = thread().slice(firstEvidence);
    expect(replies[0]!.text.split('\n')[0]).toBe(
      ':arrows_counterclockwise: Evidence changed since the last answer: 2 machine(s) have drifted MACs; findings: 1 new (MAC_DRIFT site-b-node2); 1 with new evidence (MAC_DRIFT site-b-node1). The new evidence follows.',
    );
    expect(replies.slice(1).map((r) => r.text)).toEqual(thread().slice(0, firstEvidence).map(() => 'Evidence for mac-diff site-b'));

    // The group comes again (a third alert) with the same evidence: the answer is edited, the thread stays as it is.
    const shownSoFar = thread().length;
    await run(['f1', 'f2', 'f3']);
    expect(thread()).toHaveLength(shownSoFar);
    expect(slack.updates).toEqual([answer!.ts, answer!.ts]);

    // The drift heals while the group still fires: one line says so, with no evidence to follow.
    findings = [];
    await run(['f1', 'f2', 'f3', 'f4']);
    const healed = thread().slice(shownSoFar);
    expect(healed.map((r) => r.text)).toEqual([':arrows_counterclockwise: Evidence changed since the last answer: 0 machine(s) have drifted MACs; findings: 2 gone (MAC_DRIFT site-b-node1, MAC_DRIFT site-b-node2).']);
    expect(slack.posts.filter((p) => !p.threadTs)).toHaveLength(1);
  });
});
