import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createSlackGateway, type SlackGateway, type SlackGatewayOptions } from '../../src/edge/slack/gateway.ts';

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

describe('the Slack gateway paces alerts', () => {
  it('honours a 429: waits Retry-After, then delivers the same post once', async () => {
    const { slack, sender } = await setup();
    slack.rateLimitNext(1, 1, 'chat.postMessage');
    const { ts } = await sender.post('C0ALERTS', { text: 'drift at site-b' });
    const posts = calls(slack, 'chat.postMessage');
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(slack.channelMessages('C0ALERTS').map((m) => m.ts)).toEqual([ts]);
    expect(sender.stats.rateLimited).toBe(1);
  });

  it('a 429 holds the whole channel, not only the call that got it', async () => {
    const { slack, sender } = await setup();
    slack.rateLimitNext(1, 1, 'chat.postMessage');
    await Promise.all([sender.post('C0ALERTS', { text: 'first' }), sender.post('C0ALERTS', { text: 'second' })]);
    const posts = calls(slack, 'chat.postMessage');
    expect(posts.map((c) => [c.status, c.params.text])).toEqual([
      [429, 'first'],
      [200, 'first'],
      [200, 'second'],
    ]);
    expect(posts[2]!.at - posts[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('paces calls to one channel but lets another channel go meanwhile', async () => {
    const { slack, sender } = await setup({ intervalMs: 150 });
    await Promise.all([
      ...[1, 2, 3, 4].map((i) => sender.post('C0ALERTS', { text: `a${i}` })),
      sender.post('C0OTHER', { text: 'b1' }),
    ]);
    const inA = calls(slack, 'chat.postMessage').filter((c) => c.params.channel === 'C0ALERTS');
    expect(inA.map((c) => c.params.text)).toEqual(['a1', 'a2', 'a3', 'a4']);
    // Arrival times at the emulator: one request delayed on a loaded machine shortens the next gap, so the bound is loose.
    for (let i = 1; i < inA.length; i++) expect(inA[i]!.at - inA[i - 1]!.at).toBeGreaterThanOrEqual(100);
    const b = calls(slack, 'chat.postMessage').find((c) => c.params.channel === 'C0OTHER')!;
    expect(b.seq).toBeLessThan(inA[3]!.seq);
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
