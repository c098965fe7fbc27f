import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createSlackGateway, type SlackGateway } from '../../src/edge/slack/gateway.ts';
import { watchWaits } from '../helpers/scheduled-waits.ts';

/*
 * A 429 holds only the method and channel it came from (S-429-PER-METHOD): the gateway waits it
 * out itself instead of letting @slack/web-api pause the whole client (S-429-PAUSES-CLIENT).
 * Real parts: the Slack emulator over loopback HTTP and @slack/web-api's WebClient. Counts and
 * order of the calls the emulator saw, and the waits the gateway scheduled; never the clock.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ slack: SlackEmulator; gateway: SlackGateway }> {
  const slack = await startSlackEmulator({ channels: ['C0BUSY', 'C0OTHER'] });
  cleanups.push(() => slack.close());
  // The SDK's backoff (random 500-1000 ms by default) pinned, so that the only 1000 ms wait is Retry-After's.
  const gateway = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact: (s) => s, log: silentLogger(), intervalMs: 0, retryConfig: { retries: 3, minTimeout: 5, maxTimeout: 5, randomize: false } });
  cleanups.push(() => gateway.close(100));
  return { slack, gateway };
}

const seen = (slack: SlackEmulator) => slack.calls.map((c) => `${c.method} ${String(c.params.channel)} ${c.status}`);
const postsIn = (slack: SlackEmulator, channel: string) => slack.calls.filter((c) => c.method === 'chat.postMessage' && c.params.channel === channel && c.status === 200).length;

describe('a 429 holds its own method in its own channel, nothing else', () => {
  it('a chat.update storm that draws a 429 with Retry-After: 30 does not hold back a post to another channel', async () => {
    const { slack, gateway } = await setup();
    const { ts } = await gateway.post('C0BUSY', { text: 'dns-check prod: running' });
    slack.rateLimitNext(1, 30, 'chat.update');
    const storm = [1, 2, 3, 4].map((i) => gateway.update('C0BUSY', ts, { text: `dns-check prod: ${i} of 4 zones` }).catch((err: unknown) => err));
    await slack.waitFor((s) => s.calls.some((c) => c.method === 'chat.update' && c.status === 429), { description: 'the storm drawing its 429' });

    await gateway.post('C0OTHER', { text: 'mac-diff site-b: 2 drifts' });

    // The post went while chat.update in C0BUSY was still waiting its 30 s: the SDK's paused queue would have held it.
    expect(seen(slack)).toEqual(['chat.postMessage C0BUSY 200', 'chat.update C0BUSY 429', 'chat.postMessage C0OTHER 200']);
    expect(slack.channelMessages('C0OTHER').map((m) => m.text)).toEqual(['mac-diff site-b: 2 drifts']);
    await gateway.close(0);
    await Promise.all(storm);
  });

  it('the storm then sends its latest update once, after Retry-After; the other channel went during the wait', async () => {
    const { slack, gateway } = await setup();
    const { ts } = await gateway.post('C0BUSY', { text: 'dns-check prod: running' });
    slack.rateLimitNext(1, 1, 'chat.update');
    const timers = watchWaits(() => postsIn(slack, 'C0OTHER'));
    try {
      const storm = [1, 2, 3, 4].map((i) => gateway.update('C0BUSY', ts, { text: `dns-check prod: ${i} of 4 zones` }));
      await slack.waitFor((s) => s.calls.some((c) => c.method === 'chat.update' && c.status === 429), { description: 'the storm drawing its 429' });
      await gateway.post('C0OTHER', { text: 'mac-diff site-b: 2 drifts' });
      await Promise.all(storm);
    } finally {
      timers.restore();
    }
    // One 1000 ms wait (Retry-After: 1), begun before the other channel's post and over after it.
    expect(timers.waits.filter((w) => w.ms === 1000)).toEqual([{ ms: 1000, scheduled: 0, fired: 1 }]);
    const updates = slack.calls.filter((c) => c.method === 'chat.update');
    expect(updates.map((c) => [c.status, c.params.text])).toEqual([
      [429, 'dns-check prod: 1 of 4 zones'],
      [200, 'dns-check prod: 1 of 4 zones'],
      [200, 'dns-check prod: 4 of 4 zones'],
    ]);
    expect(slack.channelMessages('C0BUSY')[0]?.text).toBe('dns-check prod: 4 of 4 zones');
    expect(gateway.stats.rateLimited).toBe(1);
  });

  it('a post that goes at once (not paced) still waits out the 429 its channel drew for chat.postMessage', async () => {
    const { slack, gateway } = await setup();
    slack.rateLimitNext(1, 1, 'chat.postMessage');
    const timers = watchWaits(() => postsIn(slack, 'C0BUSY'));
    try {
      const alert = gateway.post('C0BUSY', { text: 'alert: DNS drift on prod' });
      await slack.waitFor((s) => s.calls.some((c) => c.status === 429), { description: 'the alert drawing its 429' });
      await Promise.all([alert, gateway.post('C0BUSY', { text: 'dns-check prod: running' }, { paced: false })]);
    } finally {
      timers.restore();
    }
    // Nothing reached C0BUSY while Retry-After was waited out; then both posts, once each.
    expect(timers.waits.filter((w) => w.ms === 1000)).toEqual([{ ms: 1000, scheduled: 0, fired: 0 }]);
    expect(seen(slack)).toEqual(['chat.postMessage C0BUSY 429', 'chat.postMessage C0BUSY 200', 'chat.postMessage C0BUSY 200']);
    expect(slack.channelMessages('C0BUSY').map((m) => m.text).sort()).toEqual(['alert: DNS drift on prod', 'dns-check prod: running']);
  });
});
