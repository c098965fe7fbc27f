import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator } from '../../lab/maas-sim/index.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import { ANSWER_LIMITS } from '../../src/edge/slack/answer-render.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';
import { hasRedisServer, startPrivateRedis } from '../../lab/private-redis.ts';

// Real parts: `serve` (the Bolt HTTP listener and a worker) on loopback, Redis, the Slack Web API
// emulator, the MAAS and Kubernetes API simulators with the lab's wiped prod record. Requests are
// what Alertmanager's webhook notifier sends (prometheus/alertmanager notify/webhook/webhook.go).

const ALERTS = 'C0ALERTS';
const OPS = 'C0OPS';
const TOKEN = 'am-token-0123456789abcdef';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface World {
  url: string;
  emulator: SlackEmulator;
  runtime: Runtime;
  post(body: unknown, token?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Top-level messages in the alert channel. */
  alerts(): ReturnType<SlackEmulator['channelMessages']>;
}

interface WorldOptions {
  /** Another Redis than the shared test one (one the test stops and starts). */
  redisUrl?: string;
  mode?: 'http' | 'socket';
  /** false: no ALERTMANAGER_TOKEN in the environment. */
  token?: boolean;
}

async function world(o: WorldOptions = {}): Promise<World> {
  const lab = dnsLabScenario();
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  cleanups.push(() => maas.close());
  const prod = lab.clusters.find((c) => c.name === 'prod');
  const kube = await startKubeSimulator({ state: structuredClone(prod?.kube) });
  cleanups.push(() => kube.close());
  const emulator = await startSlackEmulator({ channels: [OPS, ALERTS] });
  cleanups.push(() => emulator.close());
  const env = { MAAS_KEY: apiKey, KC: kubeconfigFor(kube) };
  const yaml = `
slack: { alertChannel: ${ALERTS}, commandChannels: [${OPS}] }
maas: { region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY } }
clusters:
  prod: { maas: region-a, kube: { kubeconfig: env:KC } }
watch: { clusters: false }
alertmanager:
  routes:
    - match: { alertname: KubeAPIDown }
      check: dns-check
      targetLabel: cluster
`;
  const loaded = { ...parseConfigText(yaml, { path: 'am.yaml', env }), secrets: [apiKey] };
  const prefix = freshPrefix('am');
  const runtime = await startRuntime({
    role: 'serve',
    loaded: { ...loaded, warnings: [] },
    env: {
      ...env,
      SLACK_BOT_TOKEN: emulator.botToken,
      ...(o.mode === 'socket' ? { SLACK_APP_TOKEN: emulator.appToken } : { SLACK_SIGNING_SECRET: emulator.signingSecret }),
      SLACK_API_URL: emulator.apiUrl,
      SLACK_MODE: o.mode ?? 'http',
      PORT: '0',
      REDIS_URL: o.redisUrl ?? TEST_REDIS_URL,
      ...(o.token === false ? {} : { ALERTMANAGER_TOKEN: TOKEN }),
    },
    prefix,
    host: '127.0.0.1',
    log: silentLogger(),
  });
  cleanups.push(async () => {
    await runtime.close();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  const url = `http://127.0.0.1:${runtime.port}/alertmanager`;
  return {
    url,
    emulator,
    runtime,
    post: async (body, token = TOKEN) => {
      const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : { text }) as Record<string, unknown> };
    },
    alerts: () => emulator.channelMessages(ALERTS).filter((m) => !m.threadTs),
  };
}

const alert = (labels: Record<string, string>, fingerprint: string, status: 'firing' | 'resolved' = 'firing') => ({
  status,
  labels,
  annotations: { summary: 'The API server of prod does not answer' },
  startsAt: '2026-12-01T03:00:00Z',
  endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-12-01T03:20:00Z',
  generatorURL: 'http://prometheus.example/graph',
  fingerprint,
});

function webhook(alerts: ReturnType<typeof alert>[], status: 'firing' | 'resolved' = 'firing') {
  return {
    receiver: 'maas-chatops',
    status,
    alerts,
    groupLabels: { alertname: 'KubeAPIDown' },
    commonLabels: { alertname: 'KubeAPIDown' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager.example:9093',
    version: '4',
    groupKey: '{}:{alertname="KubeAPIDown"}',
    truncatedAlerts: 0,
  };
}

const kubeDown = (fingerprint: string, status: 'firing' | 'resolved' = 'firing') => alert({ alertname: 'KubeAPIDown', cluster: 'prod', severity: 'critical' }, fingerprint, status);
const textOf = (m: { text?: string; blocks?: unknown[]; updates: { text?: string; blocks?: unknown[] }[] }) => JSON.stringify(m.updates.at(-1) ?? m);

describe('POST /alertmanager: every alert answered with its check', () => {
  it('answers a firing group with the dns-check verdict in the alert channel, once; updates it as the group changes; says the resolve in its thread', async () => {
    const w = await world();
    const first = await w.post(webhook([kubeDown('a1')]));
    expect(first).toEqual({ status: 200, body: { checks: 1, duplicates: 0, unrouted: [] } });
    await waitUntil(() => w.alerts().length > 0, 20_000);
    const [message] = w.alerts();
    expect(textOf(message!)).toContain('API record WIPED, empty-set hash cached');
    expect(textOf(message!)).toContain('KubeAPIDown');
    const lines = blocksText(message!.blocks ?? []);
    expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(ANSWER_LIMITS.maxLines);
    expect(lines.join('\n').length).toBeLessThanOrEqual(ANSWER_LIMITS.maxChars);

    // Alertmanager resends the same group (repeat_interval, or both members of an HA pair): one check.
    expect((await w.post(webhook([kubeDown('a1')]))).body).toMatchObject({ checks: 0, duplicates: 1 });

    // The group changes (a second alert): the same message is brought up to date.
    await w.post(webhook([kubeDown('a1'), kubeDown('a2')]));
    await waitUntil(() => (w.alerts()[0]?.updates.length ?? 0) > 0, 20_000);
    expect(w.alerts()).toHaveLength(1);
    expect(textOf(w.alerts()[0]!)).toContain('2 firing');

    // The answer is a channel answer's size; every finding, whole, is in its thread.
    const evidence = () => w.emulator.messages.filter((m) => m.threadTs === message!.ts && /DNS_EMPTY_HASH_CACHED/.test(JSON.stringify(m)));
    expect(evidence().length).toBeGreaterThan(0);
    const resolvedReply = (m: { threadTs?: string; text: string }) => m.threadTs === message!.ts && m.text.includes('Alertmanager resolved KubeAPIDown');
    await w.post(webhook([kubeDown('a1', 'resolved'), kubeDown('a2', 'resolved')], 'resolved'));
    await waitUntil(() => w.emulator.messages.some(resolvedReply), 20_000);
    expect(w.emulator.messages.filter(resolvedReply)).toHaveLength(1);
    expect(w.alerts()).toHaveLength(1);
  }, 60_000);

  it('refuses a wrong token with 401 and runs nothing; an alert no route matches, or naming an unknown cluster, is counted and not posted', async () => {
    const w = await world();
    expect((await w.post(webhook([kubeDown('a1')]), 'wrong-token')).status).toBe(401);
    const unmatched = await w.post(webhook([alert({ alertname: 'DiskFull', cluster: 'prod' }, 'b1'), alert({ alertname: 'KubeAPIDown', cluster: 'nope' }, 'b2')]));
    expect(unmatched.status).toBe(200);
    expect(unmatched.body).toMatchObject({
      checks: 0,
      unrouted: [
        { alertname: 'DiskFull', reason: 'unmatched' },
        { alertname: 'KubeAPIDown', reason: 'unknown_target', detail: 'label cluster="nope" is not a configured cluster' },
      ],
    });
    const bad = await w.post({ version: '3', alerts: [] });
    expect(bad).toEqual({ status: 400, body: { error: `version is "3"; this endpoint reads Alertmanager's webhook version "4"` } });
    const metrics = await w.runtime.metrics.text();
    expect(metrics).toMatch(/maas_chatops_alertmanager_total\{outcome="unauthorized"\} 1/);
    expect(metrics).toMatch(/maas_chatops_alertmanager_total\{outcome="unmatched"\} 1/);
    expect(metrics).toMatch(/maas_chatops_alertmanager_total\{outcome="unknown_target"\} 1/);
    expect(w.emulator.messages.filter((m) => m.channel === ALERTS)).toEqual([]);
    const jobs = await w.runtime.queues.queue('alertmanager').getJobCounts();
    expect(Object.values(jobs).reduce((a, b) => a + b, 0)).toBe(0);
  }, 60_000);

  it('serves /alertmanager in Socket Mode too, on the listener the bot opens for its probes', async () => {
    const w = await world({ mode: 'socket' });
    await w.emulator.waitFor((e) => e.openSocketConnections === 1, { description: 'the bot to open its socket' });
    expect(await w.post(webhook([kubeDown('s1')]))).toEqual({ status: 200, body: { checks: 1, duplicates: 0, unrouted: [] } });
    await waitUntil(() => w.alerts().length > 0, 20_000);
    expect(w.alerts()).toHaveLength(1);
    expect(textOf(w.alerts()[0]!)).toContain('API record WIPED');
  }, 60_000);

  it('is off without ALERTMANAGER_TOKEN: 404, whatever token is sent, and nothing is queued', async () => {
    const w = await world({ token: false });
    for (const token of [TOKEN, '']) expect((await w.post(webhook([kubeDown('o1')]), token)).status).toBe(404);
    const jobs = await w.runtime.queues.queue('alertmanager').getJobCounts();
    expect(Object.values(jobs).reduce((a, b) => a + b, 0)).toBe(0);
    expect(await w.runtime.metrics.text()).not.toMatch(/maas_chatops_alertmanager_total\{/);
  }, 60_000);

  // Alertmanager resends a notification answered 5xx (notify/webhook/webhook.go): the first try
  // must leave nothing behind that makes the resend look like a duplicate.
  it.runIf(hasRedisServer())("queues Alertmanager's resend after a 503: the refused try leaves no duplicate window behind", async () => {
    const first = await startPrivateRedis();
    const w = await world({ redisUrl: first.url });
    await first.stop();
    const refused = await w.post(webhook([kubeDown('r1')]));
    expect(refused).toEqual({ status: 503, body: { error: 'the checks could not be queued; try again' } });

    const again = await startPrivateRedis(Number(new URL(first.url).port));
    // Stopped last (cleanups run in reverse): the runtime closes its queues while Redis still answers.
    cleanups.unshift(() => again.stop());
    const ready = `http://127.0.0.1:${w.runtime.port}/readyz`;
    await waitUntil(async () => (await fetch(ready)).status === 200, 20_000);
    const resent = await w.post(webhook([kubeDown('r1')]));
    expect(resent).toEqual({ status: 200, body: { checks: 1, duplicates: 0, unrouted: [] } });
    await waitUntil(() => w.alerts().length > 0, 20_000);
    expect(w.alerts()).toHaveLength(1);
    expect(textOf(w.alerts()[0]!)).toContain('API record WIPED');
    // Resent once more within the window: the answer stands, no second check.
    expect((await w.post(webhook([kubeDown('r1')]))).body).toMatchObject({ checks: 0, duplicates: 1 });
  }, 60_000);

  // The answer comes while the scan may still be posting the alert's evidence (the alert's ts is
  // saved after it): the job waits for that reconcile rather than posting a second top-level message.
  it("answers in the thread of the bot's own open alert for that target", async () => {
    const w = await world();
    await w.runtime.queues.enqueue('scan', { check: 'dns-check', target: 'prod' });
    await waitUntil(() => w.alerts().length === 1, 20_000);
    const [own] = w.alerts();
    await w.post(webhook([kubeDown('c1')]));
    // The alert's own evidence is in its thread from the start; the answer to Alertmanager comes after it.
    const answer = (m: { threadTs?: string; text: string }) => m.threadTs === own!.ts && !/^Evidence for /.test(m.text);
    await waitUntil(() => w.emulator.messages.some(answer), 20_000);
    const reply = w.emulator.messages.find(answer);
    expect(JSON.stringify(reply)).toContain('API record WIPED');
    expect(w.alerts()).toHaveLength(1);
  }, 60_000);
});
