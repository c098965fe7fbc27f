import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { loadConfig } from '../../src/core/config.ts';
import { kubeconfigFor } from '../../lab/kube-sim/index.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';
import { closeLabServe } from '../helpers/close-lab-serve.ts';

/*
 * Every alert rule in docs/operations.md on a maas_chatops_ series: a real run through the serve
 * runtime (the lab's MAAS, SSH and Kubernetes simulators, the Slack emulator, real Redis) that
 * makes exactly that series appear on /metrics. A rule on a series the code never records fails here.
 */

interface Rule {
  alert: string;
  expr: string;
}

const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const rulesBlock = /Alerts worth having:\s*```yaml\n([\s\S]*?)```/.exec(operations)?.[1] ?? '';
const rules = parseYaml(rulesBlock) as Rule[];

/** The maas_chatops_ series a rule selects: name and its label matchers (= and !=). */
function selectors(expr: string): { name: string; matchers: { label: string; op: string; value: string }[] }[] {
  return [...expr.matchAll(/\b(maas_chatops_[a-z_]+)(?:\{([^}]*)\})?/g)].map((m) => ({
    name: m[1]!,
    matchers: [...(m[2] ?? '').matchAll(/(\w+)\s*(!=|=)\s*"([^"]*)"/g)].map((x) => ({ label: x[1]!, op: x[2]!, value: x[3]! })),
  }));
}

/** Samples of `name` on the /metrics text whose labels satisfy the matchers and whose value is above 0. */
function samples(text: string, selector: ReturnType<typeof selectors>[number]): string[] {
  return text.split('\n').filter((line) => {
    const m = new RegExp(`^${selector.name}(?:\\{([^}]*)\\})? (\\S+)$`).exec(line);
    if (!m || !(Number(m[2]) > 0)) return false;
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
    return selector.matchers.every((s) => (s.op === '=' ? labels[s.label] === s.value : labels[s.label] !== s.value));
  });
}

let world: LabWorld;
let emulator: SlackEmulator;
let runtime: Runtime;
let appUrl: string;
const prefix = freshPrefix('alert-rules');

beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
  world = await startLabWorld();
  const raw = parseYaml(world.configText) as Record<string, Record<string, unknown>>;
  // Peers that fail: a rack whose SSH port is closed, a cluster whose kube token is wrong.
  raw.sites!['site-deadrack'] = {
    maas: 'region-a',
    machines: { zone: 'nowhere' },
    rack: { resolver: '127.0.0.1:9', probe: 'ssh', ssh: { host: '127.0.0.1', port: 9, user: 'ops', privateKey: 'env:LAB_SSH_KEY', hostKey: `SHA256:${'A'.repeat(43)}` } },
  };
  raw.clusters!['prod-badtoken'] = { maas: 'region-a', kube: { kubeconfig: 'env:BAD_KUBECONFIG', namespace: 'default' } };
  const configPath = `${world.configPath}.alert-rules.yaml`;
  writeFileSync(configPath, stringify(raw), { mode: 0o600 });
  const env = {
    ...world.env,
    BAD_KUBECONFIG: kubeconfigFor(world.kube.prod!, { token: 'not-the-token' }),
    SLACK_BOT_TOKEN: emulator.botToken,
    SLACK_SIGNING_SECRET: emulator.signingSecret,
    SLACK_MODE: 'http',
    SLACK_API_URL: emulator.apiUrl,
    PORT: '0',
    REDIS_URL: TEST_REDIS_URL,
  };
  runtime = await startRuntime({ role: 'serve', loaded: loadConfig({ path: configPath, env }), env, prefix, host: '127.0.0.1', log: silentLogger() });
  appUrl = `http://127.0.0.1:${runtime.port}`;
}, 60_000);

afterAll(() => closeLabServe({ runtime, world, emulator, prefix }));

async function command(text: string): Promise<void> {
  const sent = await emulator.sendSlashCommand({ appUrl, text, user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
  expect(sent.status).toBe(200);
  await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { timeoutMs: 10_000, description: `the answer to /maas ${text}` });
}

async function scrape(): Promise<string> {
  return (await fetch(`${appUrl}/metrics`)).text();
}

/** Runs until every selector of the rule has a sample, or fails naming the missing one. */
async function appears(rule: Rule, timeoutMs = 30_000): Promise<void> {
  for (const selector of selectors(rule.expr)) {
    await waitUntil(async () => samples(await scrape(), selector).length > 0, timeoutMs, 200).catch(() => {
      throw new Error(`${rule.alert}: no sample of ${selector.name}${JSON.stringify(selector.matchers)} on /metrics`);
    });
  }
}

/** The run that makes each rule's series appear. */
const SCENARIOS: Record<string, () => Promise<void>> = {
  MaasChatopsQueueBacklog: async () => {
    // Delayed jobs count as waiting; nobody runs them for an hour.
    await runtime.queues.queue('dns-check').add('dns-check', { target: 'prod' }, { delay: 3_600_000, jobId: 'backlog-probe' });
  },
  MaasChatopsJobsFailing: async () => {
    // A job whose site went from the config while it waited: the worker's run throws.
    await runtime.queues.queue('mac-diff').add('mac-diff', { target: 'site-removed-since' }, { attempts: 1 });
  },
  MaasChatopsPeerErrors: async () => {
    world.maas.injectFaults({ status: 500, count: 3, path: /op=power_parameters/ });
    await command('mac-diff site-b');
    await command('resolver-check site-deadrack');
    await command('dns-check prod-badtoken');
    // Each peer's errors, not only one of them.
    for (const peer of ['maas', 'ssh', 'kube']) {
      const selector = { name: 'maas_chatops_peer_requests_total', matchers: [{ label: 'peer', op: '=', value: peer }, { label: 'outcome', op: '!=', value: 'ok' }] };
      await waitUntil(async () => samples(await scrape(), selector).length > 0, 30_000, 200).catch(() => {
        throw new Error(`no ${peer} error on /metrics`);
      });
    }
  },
  // A check's result replaces its "running" answer through the response_url; the details of an `all` run are chat.postMessage calls in its thread.
  MaasChatopsSlackRateLimited: async () => {
    emulator.rateLimitNext(1, 0, 'chat.postMessage');
    await command('sites');
    await command('dns-check all');
  },
  MaasChatopsSlackErrors: async () => {
    emulator.failNext(1, { method: 'chat.postMessage', afterStoring: true });
    await command('dns-check all');
  },
  MaasChatopsRepairFailed: async () => {
    const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
    await command('fix-macs site-b');
    const plan = await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.ops).find((m) => m.seq > seq && JSON.stringify(m.blocks ?? []).includes(APPROVE_ACTION)), { timeoutMs: 30_000, description: 'the fix-macs plan' });
    // MAAS stops answering before the approval: the re-measure fails, the plan ends failed, nothing is changed.
    world.maas.injectFaults({ status: 500, count: 100, path: /\/machines\// });
    const click = await emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, user: LAB_USERS.approver, channel: LAB_CHANNELS.ops, messageTs: plan.ts });
    expect(click.status).toBe(200);
  },
  MaasChatopsDriftLeftOpen: async () => {
    await runtime.queues.queue('scan').add('scan', { check: 'dns-check', target: 'prod' }, { attempts: 1 });
  },
};

describe('every alert rule in docs/operations.md can fire', () => {
  it('the rules parse, and each maas_chatops_ rule has a run that makes its series appear', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8);
    const ours = rules.filter((r) => selectors(r.expr).length > 0);
    expect(ours.map((r) => r.alert).sort()).toEqual(Object.keys(SCENARIOS).sort());
    const theirs = rules.filter((r) => selectors(r.expr).length === 0);
    expect(theirs.map((r) => r.alert)).toEqual(['MaasChatopsNotReady']);
    expect(theirs[0]!.expr).toMatch(/^kube_deployment_status_replicas_available/);
  });

  it.each(Object.keys(SCENARIOS))('%s', async (alert) => {
    const rule = rules.find((r) => r.alert === alert);
    if (!rule) throw new Error(`no rule ${alert} in docs/operations.md`);
    await SCENARIOS[alert]!();
    await appears(rule);
  }, 60_000);

  it('an approved repair that runs counts itself and each of its steps', async () => {
    world.maas.clearFaults();
    const seq = Math.max(0, ...emulator.messages.map((m) => m.seq));
    await command('fix-macs site-b');
    const plan = await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.ops).find((m) => m.seq > seq && JSON.stringify(m.blocks ?? []).includes(APPROVE_ACTION)), { timeoutMs: 30_000, description: 'the fix-macs plan' });
    await emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, user: LAB_USERS.approver, channel: LAB_CHANNELS.ops, messageTs: plan.ts });
    const applied = { name: 'maas_chatops_repairs_total', matchers: [{ label: 'kind', op: '=', value: 'fix-macs' }, { label: 'outcome', op: '=', value: 'applied' }] };
    const verified = { name: 'maas_chatops_repair_steps_total', matchers: [{ label: 'kind', op: '=', value: 'fix-macs' }, { label: 'outcome', op: '=', value: 'verified' }] };
    await waitUntil(async () => samples(await scrape(), applied).length > 0, 60_000, 200);
    const [line] = samples(await scrape(), verified);
    const steps = Number(/ (\d+)$/.exec(line ?? '')?.[1] ?? 0);
    expect(steps).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
