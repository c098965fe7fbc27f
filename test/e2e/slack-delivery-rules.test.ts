import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator, type SlackEmulatorOptions } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { answerKey, memoryAnswerBoard, redisAnswerBoard } from '../../src/edge/slack/answer-board.ts';
import { localPacer, redisPacer } from '../../src/edge/slack/channel-pacer.ts';
import { deliverReply } from '../../src/edge/slack/deliver-reply.ts';
import { createSlackGateway, type SlackGatewayOptions } from '../../src/edge/slack/gateway.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { findPosted, newPostKey, postMetadata } from '../../src/edge/slack/post-once.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { capturedLog, recordingQueue, startHttpBot, testConfig, TEST_CONFIG_YAML } from './slack-harness.ts';

/*
 * The bot's side of the rules in docs/slack-behaviour.md: what it does when Slack answers as the
 * emulator now does. Counts of calls and messages, never wall time.
 */

const CHANNEL = 'C0OPS';
let emulator: SlackEmulator | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await emulator?.close();
  emulator = undefined;
});

async function start(options: SlackEmulatorOptions = { channels: [CHANNEL] }): Promise<SlackEmulator> {
  emulator = await startSlackEmulator(options);
  return emulator;
}

function gateway(e: SlackEmulator, extra: Partial<SlackGatewayOptions> = {}) {
  const g = createSlackGateway({ token: e.botToken, slackApiUrl: e.apiUrl, redact: (s) => s, log: silentLogger(), retryConfig: { retries: 3, minTimeout: 10, maxTimeout: 50, factor: 1 }, intervalMs: 0, ...extra });
  cleanups.push(() => g.close(100));
  return g;
}

async function redis(): Promise<{ redis: Redis; prefix: string }> {
  const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = freshPrefix('slack-rules');
  cleanups.push(async () => {
    await deletePrefix(client, prefix);
    client.disconnect();
  });
  return { redis: client, prefix };
}

const texts = (e: SlackEmulator, channel = CHANNEL) => e.channelMessages(channel).filter((m) => !m.deleted && !m.ephemeral).map((m) => m.text);
const callsOf = (e: SlackEmulator, method: string) => e.calls.filter((c) => c.method === method);

describe('unknown outcomes are resolved without duplicates', () => {
  // Both answers may mean "stored, then failed" (S-INTERNAL-ERROR): an unknown outcome, not a failure.
  it.each(['internal_error', 'fatal_error'])('%s after storing: read back, found, not sent again', async (error) => {
    const e = await start();
    e.failNext(1, { method: 'chat.postMessage', answer: 'ok-false', error, afterStoring: true });
    const { ts } = await gateway(e).post(CHANNEL, { text: 'MAC drift at site-b' });
    expect(texts(e)).toEqual(['MAC drift at site-b']);
    expect(ts).toBe(e.channelMessages(CHANNEL)[0]!.ts);
    expect(callsOf(e, 'chat.postMessage')).toHaveLength(1);
    expect(callsOf(e, 'conversations.history')).toHaveLength(1);
  });

  it('an answer that never comes after storing: read back, found, not sent again', async () => {
    const e = await start();
    e.failNext(1, { method: 'chat.postMessage', answer: 'never', afterStoring: true });
    await gateway(e, { timeoutMs: 300 }).post(CHANNEL, { text: 'plan for site-b' });
    expect(texts(e)).toEqual(['plan for site-b']);
    expect(callsOf(e, 'chat.postMessage')).toHaveLength(1);
  });

  it('the read-back asks for 15 messages a page, follows has_more, and gives up past three pages', async () => {
    const e = await start();
    const client = new WebClient(e.botToken, { slackApiUrl: e.apiUrl, retryConfig: { retries: 0 } });
    const { postId, oldest } = newPostKey();
    const keyed = await client.chat.postMessage({ channel: CHANNEL, text: 'keyed', metadata: postMetadata(postId) });
    for (let i = 0; i < 20; i++) await client.chat.postMessage({ channel: CHANNEL, text: `later ${i}` });
    expect(await findPosted(client, { channel: CHANNEL }, postId, oldest)).toEqual({ read: true, ts: keyed.ts });
    expect(callsOf(e, 'conversations.history').map((c) => Number(c.params.limit))).toEqual([15, 15]);

    for (let i = 0; i < 30; i++) await client.chat.postMessage({ channel: CHANNEL, text: `more ${i}` });
    expect(await findPosted(client, { channel: CHANNEL }, postId, oldest)).toEqual({ read: false });
  });

  it('a 429 storm on history reads: the read gives up at once and the next post goes out, nothing waits the minute', async () => {
    const e = await start();
    e.rateLimitNext(100, 60, 'conversations.history');
    e.failNext(1, { method: 'chat.postMessage', afterStoring: true });
    const slack = gateway(e);
    await slack.post(CHANNEL, { text: 'first, its outcome unknown' });
    await slack.post(CHANNEL, { text: 'second' });
    await slack.update(CHANNEL, e.channelMessages(CHANNEL)[1]!.ts, { text: 'second, edited' });
    // The unknown post is not repeated (the read could not tell); the others were not held.
    expect(texts(e)).toEqual(['first, its outcome unknown', 'second, edited']);
    expect(callsOf(e, 'conversations.history')).toHaveLength(1);
    expect(slack.stats.rateLimited).toBe(1);
  });
});

describe('pacing per channel, shared by every process', () => {
  async function burst(pacers: [ReturnType<typeof localPacer>, ReturnType<typeof localPacer>]) {
    const e = await start({ channels: [CHANNEL], postGapMs: 150 });
    const [a, b] = pacers.map((pacer) => gateway(e, { pacer, retryConfig: { retries: 0 } }));
    const posts = [0, 1, 2].flatMap((i) => [a!.post(CHANNEL, { text: `a${i}` }).catch(() => undefined), b!.post(CHANNEL, { text: `b${i}` }).catch(() => undefined)]);
    await Promise.all(posts);
    return e;
  }

  it('two processes pacing alone collide in the channel: Slack answers 429', async () => {
    const e = await burst([localPacer(200), localPacer(200)]);
    expect(e.calls.filter((c) => c.status === 429).length).toBeGreaterThan(0);
  });

  it('two processes sharing the channel slots in Redis: six posts, no 429', async () => {
    const { redis: r, prefix } = await redis();
    const shared = () => redisPacer(r, { prefix, intervalMs: 200, log: silentLogger() });
    const e = await burst([shared(), shared()]);
    expect(e.calls.filter((c) => c.status === 429)).toHaveLength(0);
    expect(texts(e).sort()).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
  });
});

describe('the running answer and its result, one message', () => {
  it('a result that comes before the running answer is posted: the running answer is not posted at all', async () => {
    const e = await start();
    const slack = gateway(e);
    const responseUrl = e.responseUrlFor(CHANNEL, 'U0OPS1');
    const notifier = createSlackNotifier({ gateway: slack, log: silentLogger() });
    await notifier.postError({ channel: CHANNEL, responseUrl, replaceRunning: true }, 'dns-check prod failed: MAAS did not answer');
    await deliverReply({ text: 'asked for `dns-check prod`: running, the result will be posted here.', visibility: 'in_channel', replacedByResult: true }, { channel: CHANNEL, user: 'U0OPS1', responseUrl }, slack, silentLogger());
    expect(texts(e)).toEqual([':x: dns-check prod failed: MAAS did not answer']);
  });

  it('the board in Redis: the worker waits for the bot to settle, then finds the running answer', async () => {
    const { redis: r, prefix } = await redis();
    const bot = redisAnswerBoard(r, { prefix, log: silentLogger() });
    const worker = redisAnswerBoard(r, { prefix, log: silentLogger() });
    const key = answerKey('https://hooks.slack.com/commands/T0/1/abc');
    expect(await bot.claimRunning(key)).toBe(true);
    const waiting = worker.awaitRunning(key, 5_000);
    expect(await bot.settleRunning(key, { at: 'message', ts: '1700000000.000100' })).toBe(true);
    expect(await waiting).toEqual({ at: 'message', ts: '1700000000.000100' });
  });

  it('a bot that never settles: the worker takes the entry after its wait, and the late running answer is taken down', async () => {
    const e = await start();
    const board = memoryAnswerBoard();
    const key = answerKey('https://hooks.slack.com/commands/T0/1/late');
    expect(await board.claimRunning(key)).toBe(true);
    expect(await board.awaitRunning(key, 200)).toBeUndefined();
    const slack = gateway(e, { answers: board });
    const posted = await slack.post(CHANNEL, { text: 'running…' });
    expect(await board.settleRunning(key, { at: 'message', ts: posted.ts })).toBe(false);
  });
});

/** A board whose Redis is away: every call fails at once (nothing listens on port 1). */
function boardWithoutRedis() {
  const away = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  away.on('error', () => undefined);
  cleanups.push(async () => away.disconnect());
  return redisAnswerBoard(away, { prefix: freshPrefix('slack-rules'), log: silentLogger(), timeoutMs: 50 });
}

describe('Redis away as the result arrives: still one message', () => {
  const running = { text: 'asked for `dns-check prod`: running, the result will be posted here.', visibility: 'in_channel' as const, replacedByResult: true };

  it('the result finds the running answer in the channel by its metadata and edits it', async () => {
    const e = await start();
    const responseUrl = e.responseUrlFor(CHANNEL, 'U0OPS1');
    // Bot and worker each meet a Redis that does not answer: the bot posts its running answer anyway.
    await deliverReply(running, { channel: CHANNEL, user: 'U0OPS1', responseUrl }, gateway(e, { answers: boardWithoutRedis() }), silentLogger());
    const seconds: string[] = [];
    const worker = createSlackNotifier({ gateway: gateway(e, { answers: boardWithoutRedis() }), log: silentLogger(), answerWaitMs: 200, onSecondMessage: (r) => seconds.push(r) });
    await worker.postError({ channel: CHANNEL, responseUrl, replaceRunning: true, askedAt: Date.now() }, 'dns-check prod failed: MAAS did not answer');

    expect(texts(e)).toEqual([':x: dns-check prod failed: MAAS did not answer']);
    expect(e.channelMessages(CHANNEL)[0]!.updates.map((u) => u.via)).toEqual(['chat.update']);
    // One read each: the bot (had the result come first?) and the worker (where is the running answer?).
    expect(callsOf(e, 'conversations.history')).toHaveLength(2);
    expect(seconds).toEqual([]);
  });

  it('no running answer in the channel either: the result is the one message', async () => {
    const e = await start();
    const responseUrl = e.responseUrlFor(CHANNEL, 'U0OPS1');
    const worker = createSlackNotifier({ gateway: gateway(e, { answers: boardWithoutRedis() }), log: silentLogger(), answerWaitMs: 200 });
    await worker.postError({ channel: CHANNEL, responseUrl, replaceRunning: true, askedAt: Date.now() }, 'dns-check prod failed: MAAS did not answer');
    expect(texts(e)).toEqual([':x: dns-check prod failed: MAAS did not answer']);
  });

  it('the result came first: the bot finds it in the channel by its metadata and posts no running answer', async () => {
    const e = await start();
    const responseUrl = e.responseUrlFor(CHANNEL, 'U0OPS1');
    const worker = createSlackNotifier({ gateway: gateway(e, { answers: boardWithoutRedis() }), log: silentLogger(), answerWaitMs: 200 });
    await worker.postError({ channel: CHANNEL, responseUrl, replaceRunning: true, askedAt: Date.now() }, 'dns-check prod failed: MAAS did not answer');
    await deliverReply(running, { channel: CHANNEL, user: 'U0OPS1', responseUrl }, gateway(e, { answers: boardWithoutRedis() }), silentLogger());
    expect(texts(e)).toEqual([':x: dns-check prod failed: MAAS did not answer']);
  });

  it('and the channel cannot be read (history refused): two messages, and the log and the count say why', async () => {
    const e = await start();
    const responseUrl = e.responseUrlFor(CHANNEL, 'U0OPS1');
    await deliverReply(running, { channel: CHANNEL, user: 'U0OPS1', responseUrl }, gateway(e, { answers: boardWithoutRedis() }), silentLogger());
    e.refuseNext(1, 'missing_scope', 'conversations.history');
    const seconds: string[] = [];
    const captured = capturedLog();
    const worker = createSlackNotifier({ gateway: gateway(e, { answers: boardWithoutRedis() }), log: captured.log, answerWaitMs: 200, onSecondMessage: (r) => seconds.push(r) });
    await worker.postError({ channel: CHANNEL, responseUrl, replaceRunning: true, askedAt: Date.now() }, 'dns-check prod failed: MAAS did not answer');

    expect(texts(e)).toEqual([running.text, ':x: dns-check prod failed: MAAS did not answer']);
    expect(seconds).toEqual(['running_answer_unknown']);
    expect(captured.lines.map((l) => l.msg)).toContain('where the running answer is is not known and the channel cannot be read to find it: the result is posted as a new message, and the running answer may still show');
  });
});

describe('where the bot may post and read: the start-up check', () => {
  it('says for the alert channel and each command channel whether the bot can post and read there, and what to do if not', async () => {
    const e = await start({ conversations: [{ id: 'C0OPS' }, { id: 'C0PUB', member: false }, { id: 'C0PRIV', private: true, member: false }, { id: 'C0ALERTS', member: false }] });
    const { log, lines } = capturedLog();
    const yaml = TEST_CONFIG_YAML.replace('commandChannels: [C0OPS]', 'commandChannels: [C0OPS, C0PUB, C0PRIV]\n  alertChannel: C0ALERTS');
    const bot = await startHttpBot(e, recordingQueue().enqueue, { config: testConfig(yaml), log });
    cleanups.push(() => bot.stop());
    expect(bot.channelAccess.map((a) => [a.channel, a.roles, a.canPost, a.canRead])).toEqual([
      ['C0ALERTS', ['alerts'], true, false],
      ['C0OPS', ['commands'], true, true],
      ['C0PUB', ['commands'], true, false],
      ['C0PRIV', ['commands'], false, false],
    ]);
    const advice = lines.filter((l) => l.advice).map((l) => String(l.msg));
    expect(advice).toEqual([
      expect.stringMatching(/^Slack channel C0ALERTS: a public channel the bot is not in: .*invite the bot there \(\/invite @maas in <#C0ALERTS>\)/),
      expect.stringMatching(/^Slack channel C0PUB: a public channel the bot is not in/),
      expect.stringMatching(/^Slack channel C0PRIV: no such channel, or a private one the bot is not in: answers reach only the person who asked.*\/invite @maas in <#C0PRIV>/),
    ]);
    // One conversations.info per channel answers it all: membership, privacy, and the scopes in its header.
    expect(e.calls.filter((c) => c.method.startsWith('conversations.')).map((c) => c.method)).toEqual(Array(4).fill('conversations.info'));
  });

  it('without chat:write.public a public channel the bot is not in takes no posts, and the advice says to invite the bot or add the scope', async () => {
    const e = await start({ conversations: [{ id: 'C0OPS' }, { id: 'C0ALERTS', member: false }], missingScopes: ['chat:write.public'] });
    const { log, lines } = capturedLog();
    const bot = await startHttpBot(e, recordingQueue().enqueue, { config: testConfig(TEST_CONFIG_YAML.replace('commandChannels: [C0OPS]', 'commandChannels: [C0OPS]\n  alertChannel: C0ALERTS')), log });
    cleanups.push(() => bot.stop());
    expect(bot.channelAccess.map((a) => [a.channel, a.canPost, a.canRead])).toEqual([
      ['C0ALERTS', false, false],
      ['C0OPS', true, true],
    ]);
    expect(lines.filter((l) => l.advice).map((l) => String(l.msg))).toEqual([
      'Slack channel C0ALERTS: a public channel the bot is not in, and the app lacks chat:write.public: nothing can be posted there; invite the bot there (/invite @maas in <#C0ALERTS>), or add chat:write.public (manifest.yml) and reinstall the app',
    ]);
    // What the check said is what Slack does: a post there is refused.
    await expect(bot.gateway.post('C0ALERTS', { text: 'alert' }, { paced: false })).rejects.toMatchObject({ slackError: 'not_in_channel' });
  });

  it('an app installed without channels:read: one history read per channel instead, and the advice names the missing scopes', async () => {
    const e = await start({ conversations: [{ id: 'C0OPS' }, { id: 'C0PRIV', private: true, member: false }], missingScopes: ['channels:read', 'groups:read'] });
    const { log } = capturedLog();
    const bot = await startHttpBot(e, recordingQueue().enqueue, { config: testConfig(TEST_CONFIG_YAML.replace('commandChannels: [C0OPS]', 'commandChannels: [C0OPS, C0PRIV]')), log });
    cleanups.push(() => bot.stop());
    expect(bot.channelAccess.map((a) => [a.channel, a.canPost, a.canRead, a.advice?.slice(0, 40)])).toEqual([
      ['C0OPS', true, true, 'the app lacks channels:read or groups:re'],
      ['C0PRIV', false, false, 'no such channel, or a private one the bo'],
    ]);
    expect(e.calls.filter((c) => c.method === 'conversations.history')).toHaveLength(1);
  });
});

describe('the ack is bounded whatever Redis does', () => {
  it('a replay check that Redis never answers: the command is still acked and queued', async () => {
    const e = await start();
    const queue = recordingQueue();
    const bot = await startHttpBot(e, queue.enqueue, { rememberSignature: () => new Promise<boolean>(() => undefined) });
    cleanups.push(() => bot.stop());
    const sent = await e.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot.port}`, text: 'dns-check prod' });
    expect(sent.status).toBe(200);
    await e.waitFor(() => queue.calls.length === 1, { description: 'the job queued' });
    expect(queue.calls.map((c) => c.jobName)).toEqual(['dns-check']);
  });
});
