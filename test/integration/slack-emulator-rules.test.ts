import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator, type SlackEmulatorOptions } from '../../lab/slack-emulator/index.ts';
import { uploadTextFile } from '../../src/edge/slack/file-upload.ts';

/*
 * The Slack emulator, rule by rule, as docs/slack-behaviour.md lists them with their sources.
 * Each test speaks to the emulator as the bot does (a real WebClient, or the response_url over
 * HTTP) and asserts what Slack would answer.
 */

let emulator: SlackEmulator | undefined;

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function start(options: SlackEmulatorOptions = {}): Promise<{ emulator: SlackEmulator; client: WebClient }> {
  emulator = await startSlackEmulator(options);
  return { emulator, client: new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true }) };
}

async function respond(url: string, body: Record<string, unknown>): Promise<{ status: number; error?: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const parsed = (await res.json()) as { error?: string };
  return { status: res.status, ...(parsed.error ? { error: parsed.error } : {}) };
}

const errorOf = (p: Promise<unknown>) => p.then(() => 'ok', (err: { data?: { error?: string } }) => err.data?.error ?? 'no answer');

describe('Slack emulator rules', () => {
  it('S-RESPONSE-URL-REPLACE: a slash command\'s response_url posts anew even with replace_original; a click\'s replaces the clicked message', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    const command = e.responseUrlFor('C0OPS', 'U0OPS1');
    await respond(command, { response_type: 'in_channel', text: 'running…' });
    await respond(command, { response_type: 'in_channel', replace_original: true, text: 'done' });
    expect(e.channelMessages('C0OPS').map((m) => [m.text, m.updates.length])).toEqual([
      ['running…', 0],
      ['done', 0],
    ]);

    const plan = await client.chat.postMessage({ channel: 'C0OPS', text: 'plan' });
    const click = await e.clickButton({ appUrl: 'http://127.0.0.1:9', actionId: 'approve', messageTs: plan.ts! }).catch(() => undefined);
    const clickUrl = click?.responseUrl ?? e.invocations.at(-1)!.responseUrl;
    await respond(clickUrl, { replace_original: true, text: 'plan: approved' });
    expect(e.channelMessages('C0OPS').find((m) => m.ts === plan.ts)!.text).toBe('plan: approved');
  });

  it('S-RESPONSE-URL-USES: five posts within 30 minutes, then used_url; past 30 minutes expired_url', async () => {
    const { emulator: e } = await start({ channels: ['C0OPS'] });
    const url = e.responseUrlFor('C0OPS', 'U0OPS1');
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await respond(url, { text: `note ${i}` }));
    expect(answers.map((a) => a.error ?? a.status)).toEqual([200, 200, 200, 200, 200, 'used_url']);
    const other = e.responseUrlFor('C0OPS', 'U0OPS1');
    e.ageResponseUrl(other, 31 * 60_000);
    expect((await respond(other, { text: 'late' })).error).toBe('expired_url');
  });

  it('S-UPDATE-OWN: chat.update edits the app\'s own messages; one posted through a response_url is cant_update_message', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    await respond(e.responseUrlFor('C0OPS', 'U0OPS1'), { response_type: 'in_channel', text: 'through the response_url' });
    const viaUrl = e.channelMessages('C0OPS')[0]!;
    expect(await errorOf(client.chat.update({ channel: 'C0OPS', ts: viaUrl.ts, text: 'edited' }))).toBe('cant_update_message');
    const own = await client.chat.postMessage({ channel: 'C0OPS', text: 'own' });
    expect(await errorOf(client.chat.update({ channel: 'C0OPS', ts: own.ts!, text: 'edited' }))).toBe('ok');
    expect(await errorOf(client.chat.delete({ channel: 'C0OPS', ts: viaUrl.ts }))).toBe('cant_delete_message');
  });

  it('S-UPDATE-BLOCKS: chat.update without blocks keeps the old ones; an empty list clears them', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    const blocks = [{ type: 'actions', elements: [{ type: 'button', action_id: 'approve', text: { type: 'plain_text', text: 'Approve' } }] }];
    const posted = await client.chat.postMessage({ channel: 'C0OPS', text: 'plan', blocks });
    await client.chat.update({ channel: 'C0OPS', ts: posted.ts!, text: 'approved' });
    expect(e.messages[0]!.blocks).toEqual(blocks);
    await client.chat.update({ channel: 'C0OPS', ts: posted.ts!, text: 'approved', blocks: [] });
    expect(e.messages[0]!.blocks).toBeUndefined();
  });

  it('S-UPDATE-TEXT: chat.update refuses a text over 4,000 characters', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    const posted = await client.chat.postMessage({ channel: 'C0OPS', text: 'short' });
    expect(await errorOf(client.chat.update({ channel: 'C0OPS', ts: posted.ts!, text: 'x'.repeat(4_001) }))).toBe('msg_too_long');
    expect(await errorOf(client.chat.update({ channel: 'C0OPS', ts: posted.ts!, text: 'x'.repeat(4_000) }))).toBe('ok');
  });

  it('S-INTERNAL-ERROR: ok:false with internal_error after storing leaves the message posted', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    e.failNext(1, { method: 'chat.postMessage', answer: 'ok-false', error: 'internal_error', afterStoring: true });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'alert' }))).toBe('internal_error');
    expect(e.channelMessages('C0OPS').map((m) => m.text)).toEqual(['alert']);
  });

  it('S-NO-ANSWER: a call that is never answered may still have been carried out', async () => {
    const { emulator: e } = await start({ channels: ['C0OPS'] });
    const client = new WebClient(e.botToken, { slackApiUrl: e.apiUrl, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 }, timeout: 300 });
    e.failNext(1, { method: 'chat.postMessage', answer: 'never', afterStoring: true });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'alert' }))).toBe('no answer');
    expect(e.channelMessages('C0OPS').map((m) => m.text)).toEqual(['alert']);
  });

  it('S-POST-PUBLIC: a public channel the bot is not in takes posts with chat:write.public, and only then', async () => {
    const { emulator: e, client } = await start({ conversations: [{ id: 'C0PUB', member: false }] });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0PUB', text: 'alert' }))).toBe('ok');
    await e.close();
    const without = await start({ conversations: [{ id: 'C0PUB', member: false }], missingScopes: ['chat:write.public'] });
    expect(await errorOf(without.client.chat.postMessage({ channel: 'C0PUB', text: 'alert' }))).toBe('not_in_channel');
  });

  it('S-POST-PRIVATE: a private channel the bot is not in does not exist for it, to post or to read', async () => {
    const { client } = await start({ conversations: [{ id: 'C0PRIV', private: true, member: false }] });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0PRIV', text: 'x' }))).toBe('channel_not_found');
    expect(await errorOf(client.conversations.history({ channel: 'C0PRIV' }))).toBe('channel_not_found');
  });

  it('S-USERGROUP-MEMBERS: usergroups.users.list answers the group\'s member ids; an unknown group is no_such_subteam; without usergroups:read it is missing_scope naming the scope', async () => {
    const { emulator: e, client } = await start({ userGroups: { S0ONCALL: ['U0ANA', 'W0BEN'] } });
    expect((await client.usergroups.users.list({ usergroup: 'S0ONCALL' })).users).toEqual(['U0ANA', 'W0BEN']);
    e.setUserGroup('S0ONCALL', ['W0BEN']);
    expect((await client.usergroups.users.list({ usergroup: 'S0ONCALL' })).users).toEqual(['W0BEN']);
    expect(await errorOf(client.usergroups.users.list({ usergroup: 'S0NOPE' }))).toBe('no_such_subteam');
    await e.close();
    const { client: blind } = await start({ userGroups: { S0ONCALL: ['U0ANA'] }, missingScopes: ['usergroups:read'] });
    const refused = await blind.usergroups.users.list({ usergroup: 'S0ONCALL' }).catch((err: { data?: { error?: string; needed?: string } }) => err.data);
    expect(refused).toMatchObject({ error: 'missing_scope', needed: 'usergroups:read' });
  });

  it('S-CHANNEL-INFO: conversations.info says whether a channel is private and the bot a member; a private one it is not in is channel_not_found; without channels:read it is missing_scope', async () => {
    const { emulator: e, client } = await start({ conversations: [{ id: 'C0OPS' }, { id: 'C0PUB', member: false }, { id: 'C0PRIV', private: true, member: false }] });
    const seen = async (channel: string) => (await client.conversations.info({ channel })).channel;
    expect(await seen('C0OPS')).toMatchObject({ is_private: false, is_member: true });
    expect(await seen('C0PUB')).toMatchObject({ is_private: false, is_member: false });
    expect(await errorOf(client.conversations.info({ channel: 'C0PRIV' }))).toBe('channel_not_found');
    e.setMembership('C0PRIV', true);
    expect(await seen('C0PRIV')).toMatchObject({ is_private: true, is_member: true });
    await e.close();
    const { client: blind } = await start({ conversations: [{ id: 'C0OPS' }], missingScopes: ['channels:read'] });
    expect(await errorOf(blind.conversations.info({ channel: 'C0OPS' }))).toBe('missing_scope');
  });

  it('S-SCOPES-HEADER: every answer to the bot token names its scopes (x-oauth-scopes), which the WebClient reads into response_metadata.scopes', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    const granted = (await client.auth.test()).response_metadata?.scopes;
    expect(granted).toEqual(expect.arrayContaining(['chat:write', 'chat:write.public', 'channels:read', 'channels:history']));
    await e.close();
    const { client: lesser } = await start({ channels: ['C0OPS'], missingScopes: ['chat:write.public'] });
    const fewer = (await lesser.conversations.info({ channel: 'C0OPS' })).response_metadata?.scopes;
    expect(fewer).toContain('chat:write');
    expect(fewer).not.toContain('chat:write.public');
  });

  it('S-READ-MEMBER: history of a public channel the bot is not in is not_in_channel', async () => {
    const { emulator: e, client } = await start({ conversations: [{ id: 'C0PUB', member: false }] });
    expect(await errorOf(client.conversations.history({ channel: 'C0PUB' }))).toBe('not_in_channel');
    e.setMembership('C0PUB', true);
    expect(await errorOf(client.conversations.history({ channel: 'C0PUB' }))).toBe('ok');
  });

  it('S-HISTORY-PAGES: a read returns at most its limit, says has_more and gives the cursor of the next page', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    for (let i = 0; i < 5; i++) await client.chat.postMessage({ channel: 'C0OPS', text: `m${i}` });
    const first = await client.conversations.history({ channel: 'C0OPS', limit: 3 });
    expect(first.messages!.map((m) => m.text)).toEqual(['m4', 'm3', 'm2']);
    expect(first.has_more).toBe(true);
    const second = await client.conversations.history({ channel: 'C0OPS', limit: 3, cursor: first.response_metadata!.next_cursor! });
    expect(second.messages!.map((m) => m.text)).toEqual(['m1', 'm0']);
    expect(second.has_more).toBe(false);
  });

  it('S-HISTORY-NON-MARKETPLACE: a non-Marketplace app reads at most 15 messages, one call a minute per method', async () => {
    const { client } = await start({ channels: ['C0OPS'], historyLimits: 'non-marketplace' });
    for (let i = 0; i < 20; i++) await client.chat.postMessage({ channel: 'C0OPS', text: `m${i}` });
    const first = await client.conversations.history({ channel: 'C0OPS', limit: 200 });
    expect(first.messages).toHaveLength(15);
    expect(first.has_more).toBe(true);
    const again = await client.conversations.history({ channel: 'C0OPS', limit: 200 }).catch((err: { code?: string; retryAfter?: number }) => err);
    expect(again).toMatchObject({ code: 'slack_webapi_rate_limited_error' });
    expect((again as { retryAfter: number }).retryAfter).toBeGreaterThan(50);
  });

  it('S-POST-RATE: with a gap set, a second post to one channel inside it is 429; another channel is not held', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS', 'C0ALERTS'], postGapMs: 60_000 });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'one' }))).toBe('ok');
    const second = await client.chat.postMessage({ channel: 'C0OPS', text: 'two' }).catch((err: { code?: string }) => err.code);
    expect(second).toBe('slack_webapi_rate_limited_error');
    expect(await errorOf(client.chat.postMessage({ channel: 'C0ALERTS', text: 'elsewhere' }))).toBe('ok');
    expect(e.calls.map((c) => c.status)).toEqual([200, 429, 200]);
  });

  it('S-429-PER-METHOD: a 429 on one method carries Retry-After and leaves the other methods answering', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    e.rateLimitNext(5, 30, 'conversations.history');
    const limited = await client.conversations.history({ channel: 'C0OPS' }).catch((err: { retryAfter?: number }) => err.retryAfter);
    expect(limited).toBe(30);
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'still posts' }))).toBe('ok');
  });

  it('S-FILE-ASYNC: a file shows in its thread some time after files.completeUploadExternal answers, so a reply posted right after shows above it', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'], fileShareDelayMs: 200 });
    const parent = await client.chat.postMessage({ channel: 'C0OPS', text: 'summary' });
    await uploadTextFile(client, { channel: 'C0OPS', threadTs: parent.ts! }, { filename: 'table.txt', title: 'The whole table', content: 'a\nb\n', rows: 2 });
    const shown = () => e.channelMessages('C0OPS').filter((m) => m.threadTs === parent.ts).map((m) => (m.files?.length ? `file ${m.files[0]!.filename}` : m.text));
    expect(shown()).toEqual([]);
    await client.chat.postMessage({ channel: 'C0OPS', thread_ts: parent.ts!, text: 'a reply after the upload' });
    await e.waitFor((x) => x.channelMessages('C0OPS').some((m) => m.files?.length), { timeoutMs: 5_000, description: 'the file to be shared' });
    expect(shown()).toEqual(['a reply after the upload', 'file table.txt']);
  });

  it('S-POST-TEXT: chat.postMessage refuses a text over 40,000 characters (msg_too_long) and a message with neither text nor blocks (no_text)', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'x'.repeat(40_000) }))).toBe('ok');
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'x'.repeat(40_001) }))).toBe('msg_too_long');
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: '' }))).toBe('no_text');
  });

  it('S-MISSING-SCOPE: a method whose scope the app lacks answers missing_scope', async () => {
    const { client } = await start({ channels: ['C0OPS'], missingScopes: ['channels:history'] });
    expect(await errorOf(client.conversations.history({ channel: 'C0OPS' }))).toBe('missing_scope');
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'posting needs only chat:write' }))).toBe('ok');
  });

  it('S-THREAD-NOT-FOUND: conversations.replies of a ts with no message is thread_not_found', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    const parent = await client.chat.postMessage({ channel: 'C0OPS', text: 'summary' });
    expect(await errorOf(client.conversations.replies({ channel: 'C0OPS', ts: parent.ts! }))).toBe('ok');
    expect(await errorOf(client.conversations.replies({ channel: 'C0OPS', ts: '1.000001' }))).toBe('thread_not_found');
  });

  it('S-FILE-NOT-FOUND: files.completeUploadExternal of a file whose bytes never reached the upload URL is file_not_found', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    const announced = await client.files.getUploadURLExternal({ filename: 'table.txt', length: 4 });
    expect(await errorOf(client.files.completeUploadExternal({ files: [{ id: announced.file_id! }], channel_id: 'C0OPS' } as never))).toBe('file_not_found');
  });

  it('S-EPHEMERAL-MEMBER: chat.postEphemeral needs the bot in the channel, even a public one chat:write.public lets it post to', async () => {
    const { client } = await start({ conversations: [{ id: 'C0PUB', member: false }] });
    expect(await errorOf(client.chat.postMessage({ channel: 'C0PUB', text: 'alert' }))).toBe('ok');
    expect(await errorOf(client.chat.postEphemeral({ channel: 'C0PUB', user: 'U0OPS1', text: 'only you' }))).toBe('not_in_channel');
  });

  it('S-RESPONSE-URL-DELETE: delete_original through a click\'s response_url takes the clicked message down', async () => {
    const { emulator: e, client } = await start({ channels: ['C0OPS'] });
    const plan = await client.chat.postMessage({ channel: 'C0OPS', text: 'plan' });
    await e.clickButton({ appUrl: 'http://127.0.0.1:9', actionId: 'reject', messageTs: plan.ts! }).catch(() => undefined);
    expect((await respond(e.invocations.at(-1)!.responseUrl, { delete_original: true })).status).toBe(200);
    expect(e.channelMessages('C0OPS').find((m) => m.ts === plan.ts)!.deleted).toBe(true);
  });

  it('S-BLOCK-TEXT: blocks whose texts add up past 12,000 characters, buttons included, are msg_blocks_too_long', async () => {
    const { client } = await start({ channels: ['C0OPS'] });
    const section = (n: number) => ({ type: 'section', text: { type: 'mrkdwn', text: 'é'.repeat(n) } });
    const button = { type: 'actions', elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'Approve' } }] };
    const fits = [section(3000), section(3000), section(3000), section(2993), button];
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'fits', blocks: fits }))).toBe('ok');
    const over = [section(3000), section(3000), section(3000), section(2994), button];
    expect(await errorOf(client.chat.postMessage({ channel: 'C0OPS', text: 'over', blocks: over }))).toBe('msg_blocks_too_long');
  });
});
