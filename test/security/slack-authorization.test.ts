import { commandRouter } from '../../commands/dispatch.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { jobRegistry } from '../../jobs/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { planReport, withId } from '../../src/engine/repair/plan.ts';
import { startSlackEmulator, type EmulatedMessage, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { approvalHandlers } from '../../src/edge/slack/approvals.ts';
import { createSlackApp, type SlackApp } from '../../src/edge/slack/app.ts';
import { APPROVE_ACTION, REJECT_ACTION } from '../../src/edge/slack/plan-render.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

/*
 * The bot role over real HTTP and a real Redis: every request the Slack emulator signs (or fails
 * to sign) goes through Bolt's verification, the channel/operator/permission policy and the parser.
 * "Nothing enqueued" is read from Redis itself: the bot role runs no worker, so a queued job stays.
 */

const MAAS_KEY = 'AuthzConsumerKey0001:AuthzTokenKey00001:AuthzTokenSecret0000000001';
const CONFIG = `
slack:
  commandChannels: [C0OPS]
  operators: [U0OPS1, U0OPS2, U0LEAD1]
  approvers: [U0LEAD1]
  permissions:
    repairs: [U0LEAD1]
maas:
  region-a: { url: "http://127.0.0.1:9/MAAS", apiKey: env:MAAS_KEY }
sites:
  site-b: { maas: region-a, machines: { zone: site-b } }
clusters:
  prod: { maas: region-a }
`;

let emulator: SlackEmulator;
let runtime: Runtime;
let appUrl: string;
let redis: Redis;
const prefix = freshPrefix('authz');

beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS', 'C0OTHER'] });
  const loaded = parseConfigText(CONFIG, { path: 'authz.yaml', env: { MAAS_KEY } });
  runtime = await startRuntime({
    role: 'bot',
    loaded,
    env: { SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: TEST_REDIS_URL },
    prefix,
    host: '127.0.0.1',
    log: silentLogger(),
  });
  appUrl = `http://127.0.0.1:${runtime.port}`;
  redis = new Redis(TEST_REDIS_URL);
});

afterAll(async () => {
  await runtime?.close();
  await emulator?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** Jobs waiting in any queue of this prefix: what the bot enqueued. */
async function queuedJobs(): Promise<number> {
  let total = 0;
  for (const name of jobRegistry.keys()) {
    const counts = await runtime.queues.queue(name).getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    total += Object.values(counts).reduce((a, b) => a + b, 0);
  }
  return total;
}

function answerTo(responseUrl: string): Promise<EmulatedMessage> {
  return emulator.waitFor((e) => e.answersTo(responseUrl)[0], { description: `an answer to ${responseUrl}` });
}

async function command(text: string, user = 'U0OPS1', channel = 'C0OPS'): Promise<EmulatedMessage> {
  const sent = await emulator.sendSlashCommand({ appUrl, text, user, channel });
  expect(sent.status).toBe(200);
  return answerTo(sent.responseUrl);
}

describe('signed requests through the real Bolt app', () => {
  it('a bad signature, a stale timestamp, no signature and a replay with a new timestamp are all refused, and nothing is queued or audited', async () => {
    const before = await runtime.audit.latest({ limit: 500 });
    const bad = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', badSignature: true });
    const stale = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    const unsigned = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', unsigned: true });
    const forgedClick = await emulator.clickButton({ appUrl, actionId: APPROVE_ACTION, value: '0123456789abcdef', user: 'U0LEAD1', messageTs: '1.000001', badSignature: true });
    // A captured help request, replayed as a dns-check: the body changes, the old signature stays.
    const original = await emulator.sendSlashCommand({ appUrl, text: 'help' });
    await answerTo(original.responseUrl);
    const replayed = await emulator.deliver({ appUrl, rawBody: original.rawBody.replace('text=help', 'text=dns-check+prod'), timestamp: original.timestamp, signature: original.signature! });
    const sameBodyNewTime = await emulator.deliver({ appUrl, rawBody: original.rawBody, timestamp: original.timestamp + 60, signature: original.signature! });
    expect([bad.status, stale.status, unsigned.status, forgedClick.status, replayed.status, sameBodyNewTime.status]).toEqual([401, 401, 401, 401, 401, 401]);

    const sentinel = await emulator.sendSlashCommand({ appUrl, text: 'sites' });
    await answerTo(sentinel.responseUrl);
    expect(await queuedJobs()).toBe(0);
    await waitUntil(async () => (await runtime.audit.latest({ limit: 500 })).length >= before.length + 2);
    const after = await runtime.audit.latest({ limit: 500 });
    // Only the two signed requests (help, sites) reached the command path.
    expect(after.length - before.length).toBe(2);
    expect(after.slice(0, 2).map((e) => e.action)).toEqual(['sites', 'help']);
  });
});

describe('future-dated and replayed requests', () => {
  it('a timestamp more than 5 minutes ahead is refused even with a valid signature; 4 minutes ahead passes', async () => {
    const before = await runtime.audit.latest({ limit: 500 });
    const future = await emulator.sendSlashCommand({ appUrl, text: 'help', timestamp: Math.floor(Date.now() / 1000) + 6 * 60 });
    expect(future.status).toBe(401);
    expect(future.body).toMatch(/more than 5 minutes in the future/);
    const near = await emulator.sendSlashCommand({ appUrl, text: 'help', timestamp: Math.floor(Date.now() / 1000) + 4 * 60 });
    expect(near.status).toBe(200);
    await answerTo(near.responseUrl);
    // The audit entry is written once the answer is out.
    await waitUntil(async () => (await runtime.audit.latest({ limit: 500 })).length > before.length);
    const after = await runtime.audit.latest({ limit: 500 });
    expect(after.length - before.length).toBe(1);
  });

  it('a byte-identical replay inside the window is refused, its signature remembered in Redis with a TTL', async () => {
    const before = await runtime.audit.latest({ limit: 500 });
    const original = await emulator.sendSlashCommand({ appUrl, text: 'sites' });
    expect(original.status).toBe(200);
    await answerTo(original.responseUrl);
    const again = await emulator.deliver({ appUrl, rawBody: original.rawBody, timestamp: original.timestamp, signature: original.signature! });
    const thrice = await emulator.deliver({ appUrl, rawBody: original.rawBody, timestamp: original.timestamp, signature: original.signature! });
    expect([again.status, thrice.status]).toEqual([401, 401]);
    expect(again.body).toMatch(/already received/);
    const key = `${prefix}:slack-seen:${original.signature!}`;
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(500);
    expect(ttl).toBeLessThanOrEqual(600);
    const after = await runtime.audit.latest({ limit: 500 });
    expect(after.length - before.length).toBe(1);
  });
});

describe('who may run what', () => {
  it.each([
    ['an unlisted channel', 'dns-check prod', 'U0OPS1', 'C0OTHER', '/maas is not enabled in this channel. Use it in <#C0OPS>.'],
    ['a non-operator', 'dns-check prod', 'U0EVE', 'C0OPS', "You are not a /maas operator (slack.operators in the bot's config). Ask whoever runs the bot to add your Slack user id U0EVE."],
    ['an operator running a repair without the repair permission', 'fix-macs site-b', 'U0OPS2', 'C0OPS', /^`\/maas fix-macs` changes things, and you do not have the repair permission \(slack\.permissions\.repairs in the bot's config\)\. Ask one of <@U0LEAD1> to run it/],
    ['an operator silencing alerts without the repair permission', 'silence prod 2h', 'U0OPS1', 'C0OPS', /repair permission/],
  ])('%s is refused ephemerally, says why, queues nothing and is audited', async (_name, text, user, channel, expected) => {
    const answer = await command(text, user, channel);
    expect(answer.ephemeral).toBe(true);
    expect(answer.user).toBe(user);
    if (typeof expected === 'string') expect(answer.text).toBe(expected);
    else expect(answer.text).toMatch(expected);
    expect(await queuedJobs()).toBe(0);
    await waitUntil(async () => (await runtime.audit.latest({ limit: 1 }))[0]?.actor === user);
    const [entry] = await runtime.audit.latest({ limit: 1 });
    expect(entry).toMatchObject({ kind: 'refusal', actor: user, channel, action: text.split(' ')[0], outcome: 'refused' });
  });

  it('the repairer may ask for a plan, and the audit trail shows it to operators by target', async () => {
    const answer = await command('fix-macs site-b', 'U0LEAD1');
    expect(answer.ephemeral).toBe(false);
    expect(await queuedJobs()).toBe(1);
    await waitUntil(async () => (await runtime.audit.latest({ target: 'site-b', limit: 5 })).some((e) => e.outcome === 'queued'));

    const trail = await command('audit site-b', 'U0OPS2');
    expect(trail.ephemeral).toBe(true);
    expect(trail.text).toMatch(/^The latest \d+ audit entries about site-b, newest first:/);
    expect(trail.text).toMatch(/<@U0LEAD1> in <#C0OPS> · command fix-macs site-b → queued/);
    expect(trail.text).toMatch(/<@U0OPS2> in <#C0OPS> · refusal fix-macs site-b → refused/);
    expect(trail.text).not.toContain('dns-check prod');

    const unknown = await command('audit nosuch', 'U0OPS2');
    expect(unknown.text).toMatch(/no site or cluster "nosuch"\. known sites and clusters: prod, site-b/);
    const denied = await command('audit', 'U0EVE');
    expect(denied.text).toMatch(/not a \/maas operator/);
  });
});

describe('hostile slash-command text is answered with a clear error and queues nothing', () => {
  const corpus: [string, string, RegExp][] = [
    ['$(…)', 'dns-check $(reboot)', /no cluster "\$\(reboot\)"/],
    ['$(…) with spaces', 'dns-check $(touch /tmp/pwned)', /^Usage: \/maas dns-check/],
    ['backticks', 'dns-check `id`', /no cluster "`id`"/],
    ['a semicolon', 'mac-diff site-b;reboot', /no site "site-b;reboot"/],
    ['a pipe', 'mac-diff site-b|nc 127.0.0.1 9', /^Usage: \/maas mac-diff/],
    ['a newline', 'mac-diff site-b\nfix-macs site-b', /^Usage: \/maas mac-diff/],
    ['double quotes', 'dns-check "prod"', /no cluster "&quot;prod&quot;"|no cluster ""prod""/],
    ["single quotes", "dns-check 'prod'", /no cluster "'prod'"/],
    ['an option-looking target', 'resolver-check --help', /no site "--help"/],
    ['a very long target', `dns-check ${'p'.repeat(90)}`, /no cluster "p{63}/],
    ['a word over 100 characters', `dns-check ${'p'.repeat(200)}`, /200 characters long; names are at most 63/],
    ['text over 500 characters', `dns-check ${'p '.repeat(300)}`, /the limit is 500/],
    ['a Cyrillic look-alike', 'dns-check pr\u043Ed', /U\+043E\), which is not plain ASCII/],
    ['a right-to-left override', 'dns-check \u202Edorp', /control or invisible characters/],
    ['a zero-width space', 'dns-check pr\u200Bod', /control or invisible characters/],
    ['a control character', 'dns-check prod\u0007', /control or invisible characters/],
    ['a Slack broadcast', 'dns-check <!channel>', /no cluster "&lt;!channel&gt;"/],
  ];

  it.each(corpus)('%s', async (_name, text, expected) => {
    const queuedBefore = await queuedJobs();
    const answer = await command(text);
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toMatch(expected);
    expect(answer.text).not.toContain('<!channel>');
    expect(await queuedJobs()).toBe(queuedBefore);
  });

  it('the audit trail keeps hostile input escaped and bounded', async () => {
    await command('dns-check pr\u202Eod\u200B');
    await waitUntil(async () => (await runtime.audit.latest({ limit: 1 }))[0]?.action === '(unreadable input)');
    const raw = await redis.xrevrange(`${prefix}:audit:refusals`, '+', '-', 'COUNT', 200);
    const text = JSON.stringify(raw);
    expect(text).toContain('\\\\u{202e}');
    // eslint-disable-next-line no-control-regex
    for (const [, fields] of raw) for (const f of fields) expect(f).not.toMatch(/[\u0000-\u001f\u202a-\u202e\u200b-\u200f]/);
  });
});

describe('interactions are authorized again when they arrive', () => {
  let bot: SlackApp;
  let url: string;
  let producer: Redis;
  let queues: JobQueues;
  const clickPrefix = freshPrefix('authz-click');

  beforeAll(async () => {
    producer = createRedis(TEST_REDIS_URL, 'producer');
    queues = new JobQueues(producer, createRedactor([]), clickPrefix);
    const config = parseConfigText(CONFIG, { path: 'authz.yaml', env: { MAAS_KEY } }).config;
    bot = await createSlackApp({
      commands: commandRouter,
      config,
      botToken: emulator.botToken,
      signingSecret: emulator.signingSecret,
      mode: 'http',
      port: 0,
      host: '127.0.0.1',
      slackApiUrl: emulator.apiUrl,
      enqueue: (name, data) => queues.enqueue(name, data),
      log: silentLogger(),
      redact: createRedactor([]),
      registerExtras: approvalHandlers({ config, plans: createPlanStore(producer, { prefix: clickPrefix }), enqueue: (name, data) => queues.enqueue(name, data), log: silentLogger() }),
    });
    await bot.start();
    url = `http://127.0.0.1:${bot.port}`;
  });

  afterAll(async () => {
    await bot?.stop();
    await queues?.close();
    await deletePrefix(producer, clickPrefix);
    producer?.disconnect();
  });

  afterEach(async () => {
    let total = 0;
    for (const name of jobRegistry.keys()) total += Object.values(await queues.queue(name).getJobCounts('waiting', 'delayed', 'active')).reduce((a, b) => a + b, 0);
    expect(total).toBe(0);
  });

  async function storedPlan(channel: string): Promise<string> {
    const plan = withId({ kind: 'fix-macs', target: 'site-b', steps: [{ subject: 'node7', action: 'set-mac', detail: 'x', params: { systemId: `n-${channel}`, hostname: 'node7', interfaceId: 1, interface: 'eth0', from: '52:54:00:00:00:01', to: '52:54:00:00:00:02' } }], refusals: [], findings: [], verdict: 'one MAC' });
    await createPlanStore(producer, { prefix: clickPrefix }).create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel, now: Date.now(), ttlMs: 60_000 });
    return plan.id;
  }

  async function click(actionId: string, value: string, user: string, channel = 'C0OPS'): Promise<EmulatedMessage> {
    const sent = await emulator.clickButton({ appUrl: url, actionId, value, user, channel, messageTs: '1700000000.000100' });
    expect(sent.status).toBe(200);
    return answerTo(sent.responseUrl);
  }

  it('a forged Approve naming a plan that does not exist', async () => {
    const answer = await click(APPROVE_ACTION, 'deadbeefdeadbeef', 'U0LEAD1');
    expect(answer).toMatchObject({ ephemeral: true, user: 'U0LEAD1' });
    expect(answer.text).toMatch(/This plan is not known any more/);
  });

  it('a forged Approve naming something that is not a plan id at all', async () => {
    const answer = await click(APPROVE_ACTION, '../../etc/passwd', 'U0LEAD1');
    expect(answer.text).toMatch(/This plan is not known any more/);
  });

  it('an Approve of a plan that belongs to another channel', async () => {
    const id = await storedPlan('C0OTHER');
    const answer = await click(APPROVE_ACTION, id, 'U0LEAD1', 'C0OPS');
    expect(answer.text).toMatch(/This plan belongs to another channel; decide it there\./);
  });

  it('an Approve from someone who is not an approver, and a Reject from a stranger', async () => {
    const id = await storedPlan('C0OPS');
    const approve = await click(APPROVE_ACTION, id, 'U0OPS2');
    expect(approve.text).toMatch(/Only approvers \(slack\.approvers\) may approve a repair, and you are not one/);
    const reject = await click(REJECT_ACTION, id, 'U0EVE');
    expect(reject.text).toMatch(/Only an approver \(slack\.approvers\) or the person who asked for the plan may reject it/);
    const stored = await createPlanStore(producer, { prefix: clickPrefix }).get(id);
    expect(stored?.state).toBe('pending');
  });

  it('a block action with an id nothing handles does nothing', async () => {
    const before = emulator.messages.length;
    const sent = await emulator.clickButton({ appUrl: url, actionId: 'made_up_action', value: 'x', user: 'U0LEAD1', messageTs: '1.000001' });
    expect([200, 404]).toContain(sent.status);
    await new Promise((r) => setTimeout(r, 200));
    expect(emulator.messages.length).toBe(before);
  });
});
