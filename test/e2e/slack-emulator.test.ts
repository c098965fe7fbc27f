import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slackSignature, startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';

let emulator: SlackEmulator;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
});

afterEach(async () => {
  await emulator.close();
});

async function rawCall(method: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${emulator.apiUrl}${method}`, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('Slack emulator Web API', () => {
  it('checks the token: none is not_authed, a wrong one invalid_auth, the app token cannot post', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await rawCall('chat.postMessage', 'channel=C0OPS&text=hi', form)).json).toEqual({ ok: false, error: 'not_authed' });
    expect((await rawCall('chat.postMessage', 'channel=C0OPS&text=hi&token=xoxb-nope', form)).json).toEqual({ ok: false, error: 'invalid_auth' });
    const asApp = await rawCall('chat.postMessage', 'channel=C0OPS&text=hi', { ...form, authorization: `Bearer ${emulator.appToken}` });
    expect(asApp.json).toEqual({ ok: false, error: 'not_allowed_token_type' });
    expect(emulator.messages).toHaveLength(0);
    expect(emulator.calls.map((c) => c.auth)).toEqual(['none', 'invalid', 'app']);
    expect(JSON.stringify(emulator.calls)).not.toContain('xoxb-nope');
  });

  it('takes JSON bodies as well as forms, and answers unknown methods like Slack', async () => {
    const json = await rawCall('chat.postMessage', JSON.stringify({ channel: 'C0OPS', text: 'hello', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }] }), {
      'content-type': 'application/json; charset=utf-8',
      authorization: `Bearer ${emulator.botToken}`,
    });
    expect(json).toMatchObject({ status: 200, json: { ok: true, channel: 'C0OPS' } });
    expect(emulator.messages[0]).toMatchObject({ text: 'hello', blocks: [{ type: 'section' }] });
    const unknown = await rawCall('chat.fly', '', { authorization: `Bearer ${emulator.botToken}` });
    expect(unknown.json).toEqual({ ok: false, error: 'unknown_method', req_method: 'chat.fly' });
  });

  it('posts, threads, updates and posts ephemerally through a real WebClient', async () => {
    const client = new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, logLevel: LogLevel.ERROR });
    const first = await client.chat.postMessage({ channel: 'C0OPS', text: 'plan' });
    const reply = await client.chat.postMessage({ channel: 'C0OPS', text: 'outcome', thread_ts: first.ts! });
    await client.chat.update({ channel: 'C0OPS', ts: first.ts!, text: 'plan: approved by <@U0LEAD1>' });
    await client.chat.postEphemeral({ channel: 'C0OPS', user: 'U0OPS1', text: 'only you' });
    expect(Number(reply.ts)).toBeGreaterThan(Number(first.ts));
    expect(emulator.channelMessages('C0OPS').map((m) => [m.text, m.threadTs, m.ephemeral, m.updates.length])).toEqual([
      ['plan: approved by <@U0LEAD1>', undefined, false, 1],
      ['outcome', first.ts, false, 0],
      ['only you', undefined, true, 0],
    ]);
    await expect(client.chat.update({ channel: 'C0OPS', ts: '1.000009', text: 'x' })).rejects.toMatchObject({ data: { error: 'message_not_found' } });
    await expect(client.chat.postMessage({ channel: 'C0NOPE', text: 'x' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
    await expect(client.chat.postMessage({ channel: 'C0OPS', text: '' })).rejects.toMatchObject({ data: { error: 'no_text' } });
  });

  it('refuses blocks beyond Slack limits', async () => {
    const client = new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, logLevel: LogLevel.ERROR });
    const blocks = Array.from({ length: 51 }, () => ({ type: 'divider' as const }));
    await expect(client.chat.postMessage({ channel: 'C0OPS', text: 'x', blocks })).rejects.toMatchObject({ data: { error: 'invalid_blocks' } });
  });

  it('answers 429 with Retry-After for as many calls as asked', async () => {
    emulator.rateLimitNext(2, 7, 'chat.postMessage');
    const headers = { authorization: `Bearer ${emulator.botToken}`, 'content-type': 'application/x-www-form-urlencoded' };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${emulator.apiUrl}chat.postMessage`, { method: 'POST', headers, body: 'channel=C0OPS&text=hi' });
      statuses.push(res.status);
      if (res.status === 429) expect(res.headers.get('retry-after')).toBe('7');
    }
    expect(statuses).toEqual([429, 429, 200]);
    // auth.test was not rate limited: the limit named chat.postMessage.
    expect((await rawCall('auth.test', '', headers)).status).toBe(200);
  });

  it('takes at most five posts on one response_url and records them in order', async () => {
    const url = emulator.responseUrlFor('C0OPS', 'U0OPS1');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `answer ${i}`, response_type: i === 0 ? 'in_channel' : undefined }) });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 404]);
    expect(emulator.answersTo(url).map((m) => [m.text, m.ephemeral])).toEqual([
      ['answer 0', false],
      ['answer 1', true],
      ['answer 2', true],
      ['answer 3', true],
      ['answer 4', true],
    ]);
  });

  it('signs requests the way Slack documents (v0 HMAC-SHA256 of v0:timestamp:body)', () => {
    // The worked example in Slack's "Verifying requests from Slack".
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackSignature('8f742231b10e8888abcd99yyyzzz85a5', 1531420618, body)).toBe('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
  });
});
