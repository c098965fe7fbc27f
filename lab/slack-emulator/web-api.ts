import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { checkMessage } from './block-limits.ts';
import type { EmulatedFile, EmulatedMessage, TokenKind } from './records.ts';

export const EMULATED = {
  teamId: 'T0EMULATE',
  teamDomain: 'emulated',
  appId: 'A0EMULATE',
  botUserId: 'U0BOT',
  botId: 'B0BOT',
} as const;

/** A channel as the emulator knows it: whether it is private and whether the bot is a member. */
export interface EmulatedConversation {
  id: string;
  private: boolean;
  member: boolean;
}

export interface WebApiState {
  /** The channel, or undefined where Slack answers channel_not_found. */
  conversation(id: string): EmulatedConversation | undefined;
  /** Bot scopes the app was not granted: methods that need one answer missing_scope. */
  missingScopes: Set<string>;
  /** User groups of the workspace: id → member user ids. */
  userGroups: Map<string, string[]>;
  /** The most messages one conversations.history or .replies call returns (1000, or 15 for a non-Marketplace app). */
  historyPageLimit: number;
  messages: EmulatedMessage[];
  nextTs(): string;
  nextSeq(): number;
  connectionUrl(): string;
  /** Files by id, from files.getUploadURLExternal on. */
  files: Map<string, EmulatedFile>;
  /** The loopback URL the bytes of a file are posted to. */
  uploadUrl(fileId: string): string;
  /** How long after files.completeUploadExternal a file shows in its channel (S-FILE-ASYNC). */
  fileShareDelayMs: number;
  /** Runs `share` after `ms` (cancelled when the emulator closes). */
  later(share: () => void, ms: number): void;
}

export type ApiResult = Record<string, unknown> & { ok: boolean };

/** The bot scopes manifest.yml asks for, read from it: the emulated install has them all but `missingScopes`. */
export const MANIFEST_BOT_SCOPES: readonly string[] = (
  parseYaml(readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8')) as { oauth_config: { scopes: { bot: string[] } } }
).oauth_config.scopes.bot;

type Handler = (params: Record<string, unknown>, auth: TokenKind, state: WebApiState) => ApiResult;

const fail = (error: string, extra: Record<string, unknown> = {}): ApiResult => ({ ok: false, error, ...extra });

/** Methods that take the bot token; apps.connections.open takes the app-level token instead. */
const handlers: Record<string, Handler> = {
  'auth.test': (_p, auth) =>
    auth === 'app'
      ? { ok: true, app_id: EMULATED.appId, team_id: EMULATED.teamId }
      : {
          ok: true,
          url: `https://${EMULATED.teamDomain}.slack.com/`,
          team: 'Emulated',
          user: 'maas-bot',
          team_id: EMULATED.teamId,
          user_id: EMULATED.botUserId,
          bot_id: EMULATED.botId,
          is_enterprise_install: false,
        },
  'chat.postMessage': botOnly((p, state) => {
    const channel = str(p.channel);
    const problem = accessProblem(channel, state, 'post') ?? contentProblem(p);
    if (problem) return fail(problem);
    const message = addMessage(state, {
      channel: channel!,
      text: str(p.text) ?? '',
      blocks: blocksOf(p.blocks),
      threadTs: str(p.thread_ts),
      ephemeral: false,
      via: 'chat.postMessage',
    });
    const metadata = metadataOf(p.metadata);
    if (metadata) message.metadata = metadata;
    return { ok: true, channel: message.channel, ts: message.ts, message: slackMessage(message) };
  }),
  // A group's member ids, or no_such_subteam; needs usergroups:read (S-USERGROUP-MEMBERS).
  'usergroups.users.list': botOnly((p, state) => {
    if (state.missingScopes.has('usergroups:read')) return fail('missing_scope', { needed: 'usergroups:read' });
    const users = state.userGroups.get(str(p.usergroup) ?? '');
    return users ? { ok: true, users: [...users] } : fail('no_such_subteam');
  }),
  // Top-level messages, newest first, a page at a time (S-HISTORY-PAGES); only where the bot is a member (S-READ-MEMBER).
  'conversations.history': botOnly((p, state) => {
    const channel = str(p.channel);
    const problem = accessProblem(channel, state, 'read') ?? scopeProblem('channels:history', state);
    if (problem) return fail(problem);
    const inRange = (m: EmulatedMessage) => withinTs(m.ts, str(p.oldest), str(p.latest), p.inclusive === true || p.inclusive === 'true');
    const found = visible(state, channel!).filter((m) => (!m.threadTs || m.threadTs === m.ts) && inRange(m)).reverse();
    return page(found, p, state);
  }),
  // A thread: its parent, then the replies oldest first, a page at a time; only where the bot is a member.
  'conversations.replies': botOnly((p, state) => {
    const channel = str(p.channel);
    const ts = str(p.ts);
    const problem = accessProblem(channel, state, 'read') ?? scopeProblem('channels:history', state);
    if (problem) return fail(problem);
    const thread = visible(state, channel!).filter((m) => m.ts === ts || m.threadTs === ts);
    if (!thread.length) return fail('thread_not_found');
    const inRange = (m: EmulatedMessage) => m.ts === ts || withinTs(m.ts, str(p.oldest), str(p.latest), true);
    return page(thread.filter(inRange), p, state);
  }),
  // The channel as the bot sees it (S-CHANNEL-INFO): a private one it is not in does not exist for it; needs channels:read or groups:read.
  'conversations.info': botOnly((p, state) => {
    const conversation = state.conversation(str(p.channel) ?? '');
    if (!conversation || (conversation.private && !conversation.member)) return fail('channel_not_found');
    const problem = scopeProblem(conversation.private ? 'groups:read' : 'channels:read', state);
    if (problem) return fail(problem);
    return { ok: true, channel: { id: conversation.id, is_channel: true, is_private: conversation.private, is_member: conversation.member } };
  }),
  'chat.postEphemeral': botOnly((p, state) => {
    const channel = str(p.channel);
    const user = str(p.user);
    const problem = accessProblem(channel, state, 'ephemeral') ?? (user ? undefined : 'user_not_found') ?? contentProblem(p);
    if (problem) return fail(problem);
    const message = addMessage(state, {
      channel: channel!,
      text: str(p.text) ?? '',
      blocks: blocksOf(p.blocks),
      threadTs: str(p.thread_ts),
      ephemeral: true,
      user: user!,
      via: 'chat.postEphemeral',
    });
    return { ok: true, message_ts: message.ts };
  }),
  // The app's own messages only (S-UPDATE-OWN); text within 4,000 (S-UPDATE-TEXT); blocks left out are kept (S-UPDATE-BLOCKS).
  'chat.update': botOnly((p, state) => {
    const channel = str(p.channel);
    const ts = str(p.ts);
    const problem = accessProblem(channel, state, 'update') ?? contentProblem(p) ?? (str(p.text) && str(p.text)!.length > UPDATE_TEXT_LIMIT ? 'msg_too_long' : undefined);
    if (problem) return fail(problem);
    const message = postedMessage(state, channel, ts);
    if (!message) return fail('message_not_found');
    if (message.via !== 'chat.postMessage') return fail('cant_update_message');
    applyUpdate(state, message, { text: str(p.text) ?? message.text, blocks: p.blocks === undefined ? message.blocks : blocksOf(p.blocks), via: 'chat.update' });
    return { ok: true, channel, ts, text: message.text, message: slackMessage(message) };
  }),
  // The app deletes its own messages; anything else is cant_delete_message.
  'chat.delete': botOnly((p, state) => {
    const channel = str(p.channel);
    const ts = str(p.ts);
    const problem = accessProblem(channel, state, 'update');
    if (problem) return fail(problem);
    const message = postedMessage(state, channel, ts);
    if (!message) return fail('message_not_found');
    if (message.via !== 'chat.postMessage') return fail('cant_delete_message');
    message.deleted = true;
    return { ok: true, channel, ts };
  }),
  'files.getUploadURLExternal': botOnly((p, state) => {
    const filename = str(p.filename);
    const length = Number(p.length);
    if (!filename) return fail('invalid_arguments');
    if (!Number.isInteger(length) || length < 1) return fail('invalid_arguments');
    const id = `F0${String(state.nextSeq()).padStart(8, '0')}`;
    state.files.set(id, { id, filename, length });
    return { ok: true, upload_url: state.uploadUrl(id), file_id: id };
  }),
  'files.completeUploadExternal': botOnly((p, state) => {
    const list = jsonList(p.files);
    if (!list?.length) return fail('invalid_arguments');
    const channel = str(p.channel_id);
    const problem = channel ? accessProblem(channel, state, 'ephemeral') : undefined;
    if (problem) return fail(problem);
    const files: EmulatedFile[] = [];
    for (const item of list) {
      const file = typeof item === 'object' && item !== null ? state.files.get(String((item as { id?: unknown }).id)) : undefined;
      // Slack completes only what was uploaded, with the length announced.
      if (!file || file.content === undefined || file.channel) return fail('file_not_found');
      if (Buffer.byteLength(file.content, 'utf8') !== file.length) return fail('file_upload_size_mismatch');
      const title = str((item as { title?: unknown }).title);
      if (title) file.title = title;
      files.push(file);
    }
    if (channel) {
      const threadTs = str(p.thread_ts);
      for (const file of files) {
        file.channel = channel;
        if (threadTs) file.threadTs = threadTs;
      }
      const text = str(p.initial_comment) ?? '';
      const share = () => {
        const message = addMessage(state, { channel, text, blocks: undefined, threadTs, ephemeral: false, via: 'chat.postMessage' });
        message.files = files;
      };
      // Slack processes the files after answering: they show in the channel later, and the answer has no shares yet (S-FILE-ASYNC).
      if (state.fileShareDelayMs > 0) {
        state.later(share, state.fileShareDelayMs);
        return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title ?? f.filename, shares: {} })) };
      }
      share();
    }
    return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title ?? f.filename })) };
  }),
  'apps.connections.open': (_p, auth, state) => {
    if (auth !== 'app') return fail('not_allowed_token_type');
    return { ok: true, url: state.connectionUrl() };
  },
};

export function callMethod(method: string, params: Record<string, unknown>, auth: TokenKind, state: WebApiState): ApiResult {
  if (auth === 'none') return fail('not_authed');
  if (auth === 'invalid') return fail('invalid_auth');
  const handler = handlers[method];
  if (!handler) return fail('unknown_method', { req_method: method });
  return handler(params, auth, state);
}

export function addMessage(
  state: WebApiState,
  m: Omit<EmulatedMessage, 'seq' | 'at' | 'ts' | 'updates' | 'deleted' | 'blocks' | 'threadTs' | 'original'> & { blocks: unknown[] | undefined; threadTs: string | undefined },
): EmulatedMessage {
  const message: EmulatedMessage = {
    seq: state.nextSeq(),
    at: Date.now(),
    channel: m.channel,
    ts: state.nextTs(),
    text: m.text,
    ephemeral: m.ephemeral,
    via: m.via,
    updates: [],
    deleted: false,
    original: { text: m.text, ...(m.blocks ? { blocks: m.blocks } : {}) },
  };
  if (m.blocks) message.blocks = m.blocks;
  if (m.threadTs) message.threadTs = m.threadTs;
  if (m.user) message.user = m.user;
  if (m.responseUrl) message.responseUrl = m.responseUrl;
  state.messages.push(message);
  return message;
}

export function applyUpdate(
  state: WebApiState,
  message: EmulatedMessage,
  update: { text: string; blocks: unknown[] | undefined; via: 'chat.update' | 'response_url' },
): void {
  message.text = update.text;
  if (update.blocks?.length) message.blocks = update.blocks;
  else delete message.blocks;
  message.updates.push({ seq: state.nextSeq(), at: Date.now(), via: update.via, text: update.text, ...(update.blocks ? { blocks: update.blocks } : {}) });
}

/** Why Slack would refuse this text/blocks pair, if it would. */
export function contentProblem(p: Record<string, unknown>): string | undefined {
  const blocks = blocksOf(p.blocks);
  if (p.blocks !== undefined && blocks === undefined) return 'invalid_blocks_format';
  const text = str(p.text);
  if (!text && !blocks?.length && p.attachments === undefined) return 'no_text';
  return checkMessage({ text: p.text, blocks });
}

function botOnly(handler: (p: Record<string, unknown>, state: WebApiState) => ApiResult): Handler {
  return (p, auth, state) => (auth === 'bot' ? handler(p, state) : fail('not_allowed_token_type'));
}

function scopeProblem(scope: string, state: WebApiState): string | undefined {
  return state.missingScopes.has(scope) ? 'missing_scope' : undefined;
}

function visible(state: WebApiState, channel: string): EmulatedMessage[] {
  return state.messages.filter((m) => m.channel === channel && !m.ephemeral && !m.deleted);
}

/** The channel's message at `ts` that chat.update and chat.delete may find: not ephemeral, not deleted. */
function postedMessage(state: WebApiState, channel: string | undefined, ts: string | undefined): EmulatedMessage | undefined {
  return state.messages.find((m) => m.channel === channel && m.ts === ts && !m.ephemeral && !m.deleted);
}

function withinTs(ts: string, oldest: string | undefined, latest: string | undefined, inclusive: boolean): boolean {
  const t = Number(ts);
  if (oldest !== undefined && (inclusive ? t < Number(oldest) : t <= Number(oldest))) return false;
  if (latest !== undefined && (inclusive ? t > Number(latest) : t >= Number(latest))) return false;
  return true;
}

function metadataAsked(p: Record<string, unknown>): boolean {
  return p.include_all_metadata === true || p.include_all_metadata === 'true' || p.include_all_metadata === '1';
}

/** chat.postMessage `metadata`: an object, or a JSON string in a form body. */
function metadataOf(value: unknown): EmulatedMessage['metadata'] | undefined {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const m = parsed as { event_type?: unknown; event_payload?: unknown } | null;
  if (!m || typeof m.event_type !== 'string' || !m.event_payload || typeof m.event_payload !== 'object') return undefined;
  return { event_type: m.event_type, event_payload: m.event_payload as Record<string, unknown> };
}

/** chat.update refuses a text longer than this (S-UPDATE-TEXT). */
export const UPDATE_TEXT_LIMIT = 4_000;

/**
 * Membership (S-POST-PUBLIC, S-POST-PRIVATE, S-READ-MEMBER): a private channel the bot is not in
 * does not exist for it; a public one takes posts with chat:write.public and nothing else.
 * `ephemeral` covers chat.postEphemeral and sharing a file, which need the bot in the channel.
 */
function accessProblem(channel: string | undefined, state: WebApiState, need: 'post' | 'read' | 'ephemeral' | 'update'): string | undefined {
  const conversation = channel ? state.conversation(channel) : undefined;
  if (!conversation || (conversation.private && !conversation.member)) return 'channel_not_found';
  if (conversation.member || need === 'update') return undefined;
  if (need === 'post') return state.missingScopes.has('chat:write.public') ? 'not_in_channel' : undefined;
  return 'not_in_channel';
}

/** A page of `found` as `limit` and `cursor` ask, with has_more and the next cursor (S-HISTORY-PAGES). */
function page(found: EmulatedMessage[], p: Record<string, unknown>, state: WebApiState): ApiResult {
  const asked = Number(p.limit ?? 100) || 100;
  const limit = Math.min(asked, state.historyPageLimit);
  const start = typeof p.cursor === 'string' && /^\d+$/.test(p.cursor) ? Number(p.cursor) : 0;
  const messages = found.slice(start, start + limit);
  const more = found.length > start + limit;
  return {
    ok: true,
    messages: messages.map((m) => slackMessage(m, metadataAsked(p))),
    has_more: more,
    ...(more ? { response_metadata: { next_cursor: String(start + limit) } } : {}),
  };
}

function jsonList(value: unknown): unknown[] | undefined {
  return blocksOf(value);
}

/** Form bodies carry blocks as a JSON string; JSON bodies as an array. */
export function blocksOf(value: unknown): unknown[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

function slackMessage(m: EmulatedMessage, withMetadata = false): Record<string, unknown> {
  return {
    ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
    type: 'message',
    user: EMULATED.botUserId,
    bot_id: EMULATED.botId,
    app_id: EMULATED.appId,
    text: m.text,
    ts: m.ts,
    ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
    ...(m.blocks ? { blocks: m.blocks } : {}),
  };
}
