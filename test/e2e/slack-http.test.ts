import { commandRouter } from '../../commands/dispatch.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkCommand } from '../../commands/check-command.ts';
import { findCommand, registerCommand } from '../../commands/index.ts';
import { startSlackEmulator, type EmulatedMessage, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createSlackApp, type SlackApp, type SlackAppOptions } from '../../src/edge/slack/app.ts';
import { capturedLog, recordingQueue, startHttpBot, testConfig, type RecordingQueue } from './slack-harness.ts';

// A stand-in check command, only while the real one is not registered yet.
if (!findCommand('dns-check')) registerCommand(checkCommand({ name: 'dns-check', targetKind: 'cluster', summary: 'test stand-in' }));

let emulator: SlackEmulator;
let bot: SlackApp | undefined;
let appUrl: string;

async function startBot(queue: RecordingQueue, extra: Partial<SlackAppOptions> = {}): Promise<SlackApp> {
  bot = await startHttpBot(emulator, queue.enqueue, extra);
  appUrl = `http://127.0.0.1:${bot.port}`;
  return bot;
}

/** The answer to one invocation: the message posted through its response_url. */
function answerTo(responseUrl: string): Promise<EmulatedMessage> {
  return emulator.waitFor((e) => e.answersTo(responseUrl)[0], { description: `an answer to ${responseUrl}` });
}

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS', 'C0OTHER'] });
});

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await emulator.close();
});

describe('Slack app over HTTP, signed requests from the emulator', () => {
  it('checks its token with auth.test when it starts', async () => {
    await startBot(recordingQueue());
    expect(emulator.calls.filter((c) => c.method === 'auth.test')).toEqual([expect.objectContaining({ auth: 'bot', status: 200 })]);
  });

  it('refuses to start with a token Slack does not know', async () => {
    const { log } = capturedLog();
    const app = await createSlackApp({
      commands: commandRouter,
      config: testConfig(),
      botToken: 'xoxb-not-the-right-token',
      signingSecret: emulator.signingSecret,
      mode: 'http',
      port: 0,
      host: '127.0.0.1',
      slackApiUrl: emulator.apiUrl,
      enqueue: recordingQueue().enqueue,
      log,
      redact: (s) => s,
    });
    await expect(app.start()).rejects.toThrow(/Slack refused the bot token \(invalid_auth\)/);
  });

  it('answers /maas help to the requester only, with the usage escaped for mrkdwn', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'help' });
    expect(sent.status).toBe(200);
    const answer = await answerTo(sent.responseUrl);
    expect(answer).toMatchObject({ channel: 'C0OPS', ephemeral: true, user: 'U0OPS1' });
    expect(answer.text).toContain('Usage: /maas &lt;command&gt; [target]');
    expect(answer.text).toContain('dns-check &lt;cluster&gt;|all');
    expect(answer.text).toContain('Also: help [command] · sites');
    expect(queue.calls).toHaveLength(0);
  });

  it('answers /maas sites with the configured regions, sites and clusters', async () => {
    await startBot(recordingQueue());
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'sites' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer.text).toMatch(/region-a\s+http:\/\/127\.0\.0\.1:5240\/MAAS/);
    expect(answer.text).toContain('site-b');
    expect(answer.text).toContain('prod');
  });

  it('refuses unsigned, wrongly signed and stale requests with 401 and queues nothing', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const unsigned = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', unsigned: true });
    const wrong = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', badSignature: true });
    const stale = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect([unsigned.status, wrong.status, stale.status]).toEqual([401, 401, 401]);

    // A valid request afterwards is answered; nothing from the refused ones ever arrives before it.
    const sentinel = await emulator.sendSlashCommand({ appUrl, text: 'help' });
    await answerTo(sentinel.responseUrl);
    expect(queue.calls).toHaveLength(0);
    expect(emulator.messages).toHaveLength(1);
  });

  it('refuses a replayed body that carries a new timestamp and the old signature', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const original = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod' });
    expect(original.status).toBe(200);
    await answerTo(original.responseUrl);
    expect(queue.calls).toHaveLength(1);

    const replay = await emulator.deliver({ appUrl, rawBody: original.rawBody, timestamp: original.timestamp + 1, signature: original.signature! });
    expect(replay.status).toBe(401);
    expect(queue.calls).toHaveLength(1);
  });

  it('queues /maas dns-check prod with names only and announces it in the channel', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', user: 'U0OPS2' });
    const answer = await answerTo(sent.responseUrl);
    expect(queue.calls).toEqual([
      {
        jobName: 'dns-check',
        data: { target: 'prod', requestedBy: 'U0OPS2', reply: { channel: 'C0OPS', user: 'U0OPS2', responseUrl: sent.responseUrl, replaceRunning: true, askedAt: expect.any(Number) } },
      },
    ]);
    expect(answer).toMatchObject({ ephemeral: false, channel: 'C0OPS' });
    expect(answer.text).toBe('<@U0OPS2> asked for `dns-check prod`: running, the result will be posted here.');
  });

  it('answers an unknown subcommand with what was wrong and the help', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'bogus' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toMatch(/^Unknown command "bogus"\./);
    expect(answer.text).toContain('Usage: /maas');
    expect(queue.calls).toHaveLength(0);
  });

  it('answers an unknown target with the known ones and queues nothing', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check nosuch' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toContain('no cluster "nosuch"');
    expect(answer.text).toContain('known clusters: prod');
    expect(queue.calls).toHaveLength(0);
  });

  it('shows a hostile target as typed: no @channel broadcast, no link', async () => {
    await startBot(recordingQueue());
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check <!channel>' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer.text).toContain('&lt;!channel&gt;');
    expect(answer.text).not.toContain('<!channel>');
  });

  it('tells the user cleanly when the queue throws, without a stack trace', async () => {
    const queue = recordingQueue(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:6399');
    });
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod' });
    expect(sent.status).toBe(200);
    const answer = await answerTo(sent.responseUrl);
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toMatch(/^\/maas dns-check failed: the job queue is unavailable, so nothing was queued\. Try again in a minute/);
    expect(answer.text).not.toMatch(/ECONNREFUSED|\n\s+at /);
    expect(queue.calls).toHaveLength(1);
  });

  it('acks before the queue answers, and gives up on a queue that hangs', async () => {
    let settled = false;
    const queue = recordingQueue(() =>
      new Promise<string>(() => undefined).finally(() => {
        settled = true;
      }),
    );
    await startBot(queue, { enqueueTimeoutMs: 300 });
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod' });
    expect(sent.status).toBe(200);
    expect(sent.body).toBe('');
    expect(queue.calls).toHaveLength(1);
    expect(settled).toBe(false);
    const answer = await answerTo(sent.responseUrl);
    expect(answer.text).toMatch(/^\/maas dns-check failed: the job queue did not answer within 300 ms, so the job may not run\./);
    expect(answer.ephemeral).toBe(true);
  });

  it('accepts /maas only in the configured command channels', async () => {
    const queue = recordingQueue();
    await startBot(queue);
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check prod', channel: 'C0OTHER' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer).toMatchObject({ ephemeral: true, channel: 'C0OTHER' });
    expect(answer.text).toBe('/maas is not enabled in this channel. Use it in <#C0OPS>.');
    expect(queue.calls).toHaveLength(0);
  });

  it('passes every outgoing text through the redactor', async () => {
    await startBot(recordingQueue(), { redact: createRedactor(['5240/MAAS']) });
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'sites' });
    const answer = await answerTo(sent.responseUrl);
    expect(answer.text).toContain('http://127.0.0.1:[redacted]');
    expect(answer.text).not.toContain('5240/MAAS');
  });

  it('lets later work register button handlers, reached by signed block_actions', async () => {
    const clicks: { actionId: string; value?: string; user: string }[] = [];
    await startBot(recordingQueue(), {
      registerExtras: (app) => {
        app.action('test_approve', async ({ ack, body, action }) => {
          await ack();
          const a = action as { action_id: string; value?: string };
          clicks.push({ actionId: a.action_id, user: body.user.id, ...(a.value ? { value: a.value } : {}) });
        });
      },
    });
    const clicked = await emulator.clickButton({ appUrl, actionId: 'test_approve', value: 'plan-1', user: 'U0LEAD1', messageTs: '1.000001' });
    expect(clicked.status).toBe(200);
    await emulator.waitFor(() => clicks.length === 1, { description: 'the click handler' });
    expect(clicks).toEqual([{ actionId: 'test_approve', value: 'plan-1', user: 'U0LEAD1' }]);

    const forged = await emulator.clickButton({ appUrl, actionId: 'test_approve', value: 'plan-1', user: 'U0LEAD1', messageTs: '1.000001', badSignature: true });
    expect(forged.status).toBe(401);
    expect(clicks).toHaveLength(1);
  });

  it('serves custom routes next to /slack/events', async () => {
    await startBot(recordingQueue(), {
      customRoutes: [{ path: '/healthz', method: ['GET'], handler: (_req, res) => res.writeHead(200).end('ok') }],
    });
    const res = await fetch(`${appUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });
});
