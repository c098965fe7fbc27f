import { commandRouter } from '../../commands/dispatch.ts';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMetrics } from '../../src/engine/metrics.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { createSlackApp } from '../../src/edge/slack/app.ts';

/*
 * Slack answering 500 after it stored a message (the emulator carries the call out, then fails):
 * the message must appear once. The channel is read back for the post's idempotency key before
 * anything is sent again.
 */

const CHANNEL = 'C0OPS';
let emulator: SlackEmulator;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: [CHANNEL] });
});

afterEach(async () => {
  await emulator.close();
});

const fastRetry = { retries: 2, minTimeout: 10, maxTimeout: 50, factor: 1 };
const calls = (method: string) => emulator.calls.filter((c) => c.method === method).length;
const posted = () => emulator.channelMessages(CHANNEL).filter((m) => m.via === 'chat.postMessage');

function notifier(slack = emulator) {
  const metrics = createMetrics({ defaultMetrics: false });
  const n = createSlackNotifier({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact: (s) => s, log: silentLogger(), retryConfig: fastRetry, metrics });
  return { n, metrics };
}

describe('the fault is real: a plain client posts twice', () => {
  it('WebClient retrying a 500 that came after the store shows the message twice', async () => {
    emulator.failNext(1, { method: 'chat.postMessage', afterStoring: true });
    const plain = new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, retryConfig: fastRetry });
    await plain.chat.postMessage({ channel: CHANNEL, text: 'hello' });
    expect(posted().map((m) => m.text)).toEqual(['hello', 'hello']);
  });
});

describe('the notifier posts once', () => {
  it('500 after storing: read back, found, not sent again', async () => {
    const { n, metrics } = notifier();
    emulator.failNext(1, { method: 'chat.postMessage', afterStoring: true });
    await n.postError({ channel: CHANNEL }, 'dns-check prod failed: MAAS unreachable');
    expect(posted()).toHaveLength(1);
    expect(calls('chat.postMessage')).toBe(1);
    expect(calls('conversations.history')).toBe(1);
    expect(await metrics.text()).toMatch(/maas_chatops_slack_api_errors_total\{method="chat.postMessage",kind="http"\} 1/);
  });

  it('500 before storing: read back, absent, sent again once', async () => {
    const { n } = notifier();
    emulator.failNext(1, { method: 'chat.postMessage' });
    await n.postError({ channel: CHANNEL }, 'once');
    expect(posted().map((m) => m.text)).toEqual([':x: once']);
    expect(calls('chat.postMessage')).toBe(2);
  });

  it('a thread post: the thread is read back with conversations.replies', async () => {
    const { n } = notifier();
    const parent = (await new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl }).chat.postMessage({ channel: CHANNEL, text: 'the plan' })).ts!;
    emulator.failNext(1, { method: 'chat.postMessage', afterStoring: true });
    await n.postInThread!({ channel: CHANNEL, ts: parent }, 'step 1 verified');
    expect(posted().filter((m) => m.threadTs === parent)).toHaveLength(1);
    expect(calls('conversations.replies')).toBe(1);
  });

  it('without channels:history it cannot tell, so it does not post again: never twice', async () => {
    const blind = await startSlackEmulator({ channels: [CHANNEL], missingScopes: ['channels:history'] });
    try {
      const { n } = notifier(blind);
      blind.failNext(1, { method: 'chat.postMessage', afterStoring: true });
      await n.postError({ channel: CHANNEL }, 'once');
      expect(blind.channelMessages(CHANNEL)).toHaveLength(1);
      expect(blind.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
      expect(blind.calls.find((c) => c.method === 'conversations.history')?.response).toMatchObject({ ok: false, error: 'missing_scope' });
    } finally {
      await blind.close();
    }
  });
});

describe('a command answer is given once', () => {
  it('the response_url answers 500 after showing the answer: it is not posted again through the Web API', async () => {
    const bot = await createSlackApp({
      commands: commandRouter,
      config: parseConfigText(`slack:\n  commandChannels: [${CHANNEL}]\n  operators: [U0OPS1]\n`, { path: 't.yaml', env: {} }).config,
      botToken: emulator.botToken,
      signingSecret: emulator.signingSecret,
      mode: 'http',
      port: 0,
      host: '127.0.0.1',
      slackApiUrl: emulator.apiUrl,
      enqueue: async () => 'job-1',
      log: silentLogger(),
      redact: (s) => s,
    });
    await bot.start();
    try {
      emulator.failNext(1, { method: 'response_url', afterStoring: true });
      const sent = await emulator.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot.port}`, text: 'help', user: 'U0OPS1', channel: CHANNEL });
      await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: 'the answer' });
      // Give a wrong second post every chance to show up: a later command's answer arrives after it would have.
      const next = await emulator.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot.port}`, text: 'help', user: 'U0OPS1', channel: CHANNEL });
      await emulator.waitFor((e) => e.answersTo(next.responseUrl)[0], { description: 'the second answer' });
      expect(emulator.answersTo(sent.responseUrl)).toHaveLength(1);
      expect(calls('chat.postEphemeral') + calls('chat.postMessage')).toBe(0);
    } finally {
      await bot.stop();
    }
  });
});

describe('the alert sender posts once', () => {
  it('500 after storing: the stored message\'s ts comes back and nothing is posted twice', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const sender = createSlackGateway({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: (s) => s, log: silentLogger(), intervalMs: 10, metrics });
    try {
      emulator.failNext(1, { method: 'chat.postMessage', afterStoring: true });
      const { ts } = await sender.post(CHANNEL, { text: 'alert: DNS drift on prod' });
      expect(posted()).toHaveLength(1);
      expect(ts).toBe(posted()[0]!.ts);
      expect(calls('chat.postMessage')).toBe(1);
      emulator.rateLimitNext(1, 0, 'chat.update');
      await sender.update(CHANNEL, ts, { text: 'alert: resolved' });
      const text = await metrics.text();
      expect(text).toMatch(/maas_chatops_slack_api_errors_total\{method="chat.postMessage",kind="http"\} 1/);
      expect(text).toMatch(/maas_chatops_slack_rate_limited_total\{method="chat.update"\} 1/);
    } finally {
      await sender.close(1000);
    }
  });
});
