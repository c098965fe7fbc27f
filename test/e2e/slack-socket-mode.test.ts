import { commandRouter } from '../../commands/dispatch.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createSlackApp, type SlackApp, type SlackAppOptions } from '../../src/edge/slack/app.ts';
import { capturedLog, recordingQueue, testConfig, type RecordingQueue } from './slack-harness.ts';

let emulator: SlackEmulator;
let bot: SlackApp | undefined;

function socketBot(queue: RecordingQueue, extra: Partial<SlackAppOptions> = {}): Promise<SlackApp> {
  const { log } = capturedLog();
  return createSlackApp({
    commands: commandRouter,
    config: testConfig(),
    botToken: emulator.botToken,
    appToken: emulator.appToken,
    mode: 'socket',
    port: 0,
    host: '127.0.0.1',
    slackApiUrl: emulator.apiUrl,
    enqueue: queue.enqueue,
    log,
    redact: (s) => s,
    ...extra,
  });
}

beforeEach(async () => {
  emulator = await startSlackEmulator();
});

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await emulator.close();
});

describe('Slack app in Socket Mode through the emulator websocket', () => {
  it('opens a connection with the app token and waits for hello', async () => {
    bot = await socketBot(recordingQueue());
    await bot.start();
    const open = emulator.calls.filter((c) => c.method === 'apps.connections.open');
    expect(open).toEqual([expect.objectContaining({ auth: 'app', status: 200 })]);
    expect(emulator.connections).toHaveLength(1);
    expect(emulator.openSocketConnections).toBe(1);
  });

  it('acks /maas help on the socket and answers through the response_url', async () => {
    const queue = recordingQueue();
    bot = await socketBot(queue);
    await bot.start();
    const sent = await emulator.sendSlashCommand({ viaSocket: true, text: 'help', user: 'U0OPS2' });
    expect(sent.acked).toBe(true);
    expect(emulator.acks.map((a) => a.envelopeId)).toEqual([sent.envelopeId]);
    const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: 'the help answer' });
    expect(answer).toMatchObject({ ephemeral: true, user: 'U0OPS2', channel: 'C0OPS' });
    expect(answer.text).toContain('Usage: /maas &lt;command&gt; [target]');
    expect(queue.calls).toHaveLength(0);
  });

  it('acks a command even while the queue hangs', async () => {
    const queue = recordingQueue(() => new Promise<string>(() => undefined));
    bot = await socketBot(queue, { enqueueTimeoutMs: 200 });
    await bot.start();
    const sent = await emulator.sendSlashCommand({ viaSocket: true, text: 'dns-check prod' });
    expect(sent.acked).toBe(true);
    const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: 'the queue error' });
    expect(answer.text).toContain('the job queue did not answer within 200 ms');
  });

  it('delivers button clicks as interactive envelopes to handlers registered by later work', async () => {
    const clicks: string[] = [];
    bot = await socketBot(recordingQueue(), {
      registerExtras: (app) => {
        app.action('test_reject', async ({ ack, body }) => {
          await ack();
          clicks.push(body.user.id);
        });
      },
    });
    await bot.start();
    const sent = await emulator.clickButton({ viaSocket: true, actionId: 'test_reject', value: 'plan-1', user: 'U0LEAD2', messageTs: '1.000001' });
    expect(sent.acked).toBe(true);
    await emulator.waitFor(() => clicks.length === 1, { description: 'the click handler' });
    expect(clicks).toEqual(['U0LEAD2']);
    expect(emulator.invocations.at(-1)).toMatchObject({ kind: 'block_actions', via: 'socket', acked: true, actionId: 'test_reject', value: 'plan-1' });
  });

  it('reconnects when Slack asks it to, through a fresh apps.connections.open', async () => {
    bot = await socketBot(recordingQueue());
    await bot.start();
    emulator.disconnectSockets('refresh_requested');
    await emulator.waitFor((e) => e.connections.length === 2 && e.openSocketConnections === 1, { timeoutMs: 15_000, description: 'a second connection' });
    expect(emulator.calls.filter((c) => c.method === 'apps.connections.open')).toHaveLength(2);
    const sent = await emulator.sendSlashCommand({ viaSocket: true, text: 'help' });
    expect(sent.acked).toBe(true);
    await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: 'the help answer after reconnecting' });
  });

  it('does not start with an app token Slack does not know', async () => {
    bot = await socketBot(recordingQueue(), { appToken: 'xapp-1-not-the-right-one' });
    await expect(bot.start()).rejects.toThrow('Socket Mode could not connect (invalid_auth)');
    expect(emulator.calls.filter((c) => c.method === 'apps.connections.open')).toEqual([
      expect.objectContaining({ auth: 'invalid', response: { ok: false, error: 'invalid_auth' } }),
    ]);
    expect(emulator.connections).toHaveLength(0);
  });

  it('serves custom routes on its own port and closes the socket on stop', async () => {
    bot = await socketBot(recordingQueue(), {
      customRoutes: [{ path: '/healthz', method: 'GET', handler: (_req, res) => res.writeHead(200).end('ok') }],
    });
    await bot.start();
    expect(bot.port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${bot.port}/healthz`);
    expect(await res.text()).toBe('ok');
    await bot.stop();
    bot = undefined;
    await emulator.waitFor((e) => e.openSocketConnections === 0, { description: 'the socket to close' });
    expect(emulator.connections.map((c) => c.open)).toEqual([false]);
  });
});
