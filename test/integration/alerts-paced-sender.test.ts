import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import type { ChannelPacer } from '../../src/edge/slack/channel-pacer.ts';
import { createSlackGateway, type SlackGateway, type SlackGatewayOptions } from '../../src/edge/slack/gateway.ts';
import { countBy } from '../helpers/outage.ts';
import { watchWaits } from '../helpers/scheduled-waits.ts';

// Real parts: the Slack Web API emulator over loopback HTTP, reached by @slack/web-api's WebClient.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: Partial<SlackGatewayOptions> = {}): Promise<{ slack: SlackEmulator; sender: SlackGateway }> {
  const slack = await startSlackEmulator();
  cleanups.push(() => slack.close());
  const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact: createRedactor(['canary-secret-777']), log: silentLogger(), intervalMs: 30, ...options });
  cleanups.push(() => sender.close(1000));
  return { slack, sender };
}

const calls = (slack: SlackEmulator, method: string) => slack.calls.filter((c) => c.method === method);

/** A pacer whose slots the test opens one by one: a post waits for its slot until then, then for the wait it is given. */
function heldSlots() {
  const asked: { channel: string; open?: (waitMs: number) => void }[] = [];
  const pacer: ChannelPacer = { reserve: (channel) => new Promise<number>((resolve) => asked.push({ channel, open: resolve })) };
  return {
    pacer,
    asked,
    waiting: (channel: string) => asked.filter((a) => a.channel === channel && a.open).length,
    open(channel: string, waitMs: number) {
      const slot = asked.find((a) => a.channel === channel && a.open);
      if (!slot?.open) throw new Error(`no post to ${channel} waits for a slot`);
      slot.open(waitMs);
      delete slot.open;
    },
  };
}

// The SDK's own backoff after a 429 is random between minTimeout and twice it (500-1000 ms by
// default), so it could itself be a 1000 ms wait; a fixed 5 ms one leaves Retry-After's wait alone at 1000.
const fixedBackoff: Partial<SlackGatewayOptions> = { retryConfig: { retries: 3, minTimeout: 5, maxTimeout: 5, randomize: false } };

describe('the Slack gateway paces alerts', () => {
  it('honours a 429: waits Retry-After, then delivers the same post once', async () => {
    const { slack, sender } = await setup(fixedBackoff);
    slack.rateLimitNext(1, 1, 'chat.postMessage');
    const timers = watchWaits(() => calls(slack, 'chat.postMessage').length);
    const { ts } = await sender.post('C0ALERTS', { text: 'drift at site-b' }).finally(() => timers.restore());
    const posts = calls(slack, 'chat.postMessage');
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    // Retry-After: 1 is one 1000 ms wait, begun after the 429 and over before the post went again.
    expect(timers.waits.filter((w) => w.ms === 1000)).toEqual([{ ms: 1000, scheduled: 1, fired: 1 }]);
    expect(slack.channelMessages('C0ALERTS').map((m) => m.ts)).toEqual([ts]);
    expect(sender.stats.rateLimited).toBe(1);
  });

  it('a 429 holds the whole channel, not only the call that got it', async () => {
    const { slack, sender } = await setup(fixedBackoff);
    slack.rateLimitNext(1, 1, 'chat.postMessage');
    const timers = watchWaits(() => calls(slack, 'chat.postMessage').length);
    await Promise.all([sender.post('C0ALERTS', { text: 'first' }), sender.post('C0ALERTS', { text: 'second' })]).finally(() => timers.restore());
    const posts = calls(slack, 'chat.postMessage');
    expect(posts.map((c) => [c.status, c.params.text])).toEqual([
      [429, 'first'],
      [200, 'first'],
      [200, 'second'],
    ]);
    // Nothing reached the channel while Retry-After was waited out: one call when the wait began and when it ended.
    expect(timers.waits.filter((w) => w.ms === 1000)).toEqual([{ ms: 1000, scheduled: 1, fired: 1 }]);
  });

  it('paces calls to one channel but lets another channel go meanwhile', async () => {
    const slots = heldSlots();
    const { slack, sender } = await setup({ pacer: slots.pacer });
    const inChannel = (channel: string) => calls(slack, 'chat.postMessage').filter((c) => c.params.channel === channel).map((c) => c.params.text);
    const sent = Promise.all([...[1, 2, 3, 4].map((i) => sender.post('C0ALERTS', { text: `a${i}` })), sender.post('C0OTHER', { text: 'b1' })]);
    await slack.waitFor(() => slots.asked.length === 2, { description: 'a1 and b1 asking for their slots' });
    expect(slots.asked.map((a) => a.channel).sort()).toEqual(['C0ALERTS', 'C0OTHER']);
    slots.open('C0ALERTS', 0);
    // a2 asks for its slot once a1 is out; C0OTHER's slot is still shut meanwhile, and held alone.
    await slack.waitFor(() => slots.waiting('C0ALERTS') === 1, { description: 'a2 asking for its slot' });
    expect(inChannel('C0ALERTS')).toEqual(['a1']);
    slots.open('C0OTHER', 0);
    await slack.waitFor(() => inChannel('C0OTHER').length === 1, { description: 'b1 in C0OTHER' });
    expect(inChannel('C0ALERTS')).toEqual(['a1']);
    // Each post to C0ALERTS goes only when its own slot opens, and after the wait the pacer names.
    const timers = watchWaits(() => inChannel('C0ALERTS').length);
    try {
      for (const n of [2, 3, 4]) {
        slots.open('C0ALERTS', 37);
        await slack.waitFor(() => inChannel('C0ALERTS').length === n, { description: `a${n} in C0ALERTS` });
        if (n < 4) await slack.waitFor(() => slots.waiting('C0ALERTS') === 1, { description: `a${n + 1} asking for its slot` });
        expect(inChannel('C0ALERTS')).toEqual(['a1', 'a2', 'a3', 'a4'].slice(0, n));
      }
    } finally {
      timers.restore();
    }
    await sent;
    expect(timers.waits.filter((w) => w.ms === 37)).toEqual([1, 2, 3].map((n) => ({ ms: 37, scheduled: n, fired: n })));
    // One slot per post: four in C0ALERTS, one in C0OTHER.
    expect(countBy(slots.asked, (a) => a.channel)).toEqual({ C0ALERTS: 4, C0OTHER: 1 });
  });

  it('folds several waiting updates of one message into the latest', async () => {
    const { slack, sender } = await setup();
    const { ts } = await sender.post('C0ALERTS', { text: 'v0' });
    slack.rateLimitNext(1, 1, 'chat.update');
    const first = sender.update('C0ALERTS', ts, { text: 'v1' });
    // v1 was refused with 429 and the WebClient waits out Retry-After to send it again; meanwhile two more updates arrive and wait behind it as one.
    await slack.waitFor((s) => s.calls.some((c) => c.method === 'chat.update' && c.status === 429));
    await Promise.all([first, sender.update('C0ALERTS', ts, { text: 'v2' }), sender.update('C0ALERTS', ts, { text: 'v3' })]);
    const ok = calls(slack, 'chat.update').filter((c) => c.status === 200);
    expect(ok.map((c) => c.params.text)).toEqual(['v1', 'v3']);
    expect(sender.stats.coalesced).toBe(1);
    expect(slack.channelMessages('C0ALERTS')[0]?.text).toBe('v3');
  });

  it('keeps a thread reply after the post it belongs to', async () => {
    const { slack, sender } = await setup();
    const { ts } = await sender.post('C0ALERTS', { text: 'alert' });
    await sender.post('C0ALERTS', { text: 'note', threadTs: ts });
    const [alert, note] = slack.channelMessages('C0ALERTS');
    expect(alert?.threadTs).toBeUndefined();
    expect(note).toMatchObject({ text: 'note', threadTs: ts });
  });

  it("fails at once with Slack's code when no retry can help", async () => {
    const { slack, sender } = await setup();
    await expect(sender.update('C0ALERTS', '123.456', { text: 'x' })).rejects.toMatchObject({ slackError: 'message_not_found' });
    expect(calls(slack, 'chat.update')).toHaveLength(1);
  });

  it('redacts a secret before it leaves', async () => {
    const { slack, sender } = await setup();
    await sender.post('C0ALERTS', { text: 'saw canary-secret-777', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'canary-secret-777' } }] });
    expect(JSON.stringify(slack.calls)).not.toContain('canary-secret-777');
  });
});
