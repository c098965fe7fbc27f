import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiCall, EmulatedFile, EmulatedMessage, Invocation, SocketAck, SocketConnection, TokenKind } from './records.ts';
import { nowSeconds, slackSignature } from './signing.ts';
import { SocketModeServer } from './socket-mode.ts';
import { answerKey } from '../../src/edge/slack/answer-board.ts';
import { addMessage, applyUpdate, blocksOf, callMethod, contentProblem, EMULATED, MANIFEST_BOT_SCOPES, type EmulatedConversation, type WebApiState } from './web-api.ts';

export type { ApiCall, EmulatedFile, EmulatedMessage, Invocation, MessageUpdate, SocketAck, SocketConnection } from './records.ts';
export { slackSignature } from './signing.ts';
export { BLOCK_LIMITS, checkBlocks, checkMessage } from './block-limits.ts';
export { EMULATED, UPDATE_TEXT_LIMIT, type EmulatedConversation } from './web-api.ts';

export interface SlackEmulatorOptions {
  /** A loopback address; default 127.0.0.1. */
  host?: string;
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  /** Public channels the bot is in; when set (or `conversations` is), every other channel answers `channel_not_found`. */
  channels?: string[];
  /** Channels with their privacy and the bot's membership (default: public, a member). */
  conversations?: { id: string; private?: boolean; member?: boolean }[];
  /**
   * `non-marketplace`: conversations.history and .replies as Slack limits a commercially
   * distributed app outside the Marketplace: one call a minute per method, at most 15 messages
   * (S-HISTORY-NON-MARKETPLACE). Default `tier3`: pages of up to 1000, no per-minute count.
   */
  historyLimits?: 'tier3' | 'non-marketplace';
  /** When set, a chat.postMessage to a channel sooner than this after the last one taken there gets 429 (S-POST-RATE). */
  postGapMs?: number;
  /** How long Slack waits for an ack; default 3000 ms. */
  ackTimeoutMs?: number;
  /** Socket Mode pings; default every 10 s. */
  pingIntervalMs?: number;
  /** Bot scopes the app lacks (e.g. channels:history): the methods that need them answer missing_scope. */
  missingScopes?: string[];
  /** User groups (S…) and their members, for usergroups.users.list. */
  userGroups?: Record<string, string[]>;
  /**
   * Slack shares a file some time after files.completeUploadExternal answers (S-FILE-ASYNC): the
   * file's message shows this long after the call, and the call's answer has no shares yet.
   * Default 0: shown at once.
   */
  fileShareDelayMs?: number;
}

export interface SlashCommandOptions {
  /** The app's base URL (`http://127.0.0.1:3000`); `/slack/events` is added when it has no path. Not needed with viaSocket. */
  appUrl?: string;
  text: string;
  command?: string;
  user?: string;
  userName?: string;
  channel?: string;
  channelName?: string;
  /** Sign with this secret instead of the emulator's. */
  signingSecret?: string;
  /** Sign with a wrong secret. */
  badSignature?: boolean;
  /** Send no signature headers at all. */
  unsigned?: boolean;
  /** The X-Slack-Request-Timestamp to sign and send (seconds); default now. */
  timestamp?: number;
  /** Deliver over the Socket Mode connection instead of HTTP. */
  viaSocket?: boolean;
}

export interface ButtonClickOptions {
  appUrl?: string;
  actionId: string;
  value?: string;
  user?: string;
  userName?: string;
  channel?: string;
  /** The message carrying the button; its blocks are sent along as Slack does. */
  messageTs: string;
  blockId?: string;
  signingSecret?: string;
  badSignature?: boolean;
  viaSocket?: boolean;
  /** Replaces top-level fields of the payload, as a forged or malformed click would; `undefined` drops one. */
  payloadOverrides?: Record<string, unknown>;
}

export interface SentRequest {
  /** The app's HTTP status; over Socket Mode 200 when acked in time, else 408. */
  status: number;
  body: string;
  responseUrl: string;
  rawBody: string;
  timestamp: number;
  signature?: string;
  envelopeId?: string;
  acked?: boolean;
  ackPayload?: Record<string, unknown>;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  description?: string;
}

export interface SlackEmulator {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `${url}/api/`: the Web API base, for SLACK_API_URL / clientOptions.slackApiUrl. */
  readonly apiUrl: string;
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly calls: ApiCall[];
  /** Every message in the order it was posted, with updates applied. */
  readonly messages: EmulatedMessage[];
  /** Every file announced with files.getUploadURLExternal, with what was uploaded and where it was shared. */
  readonly files: EmulatedFile[];
  readonly invocations: Invocation[];
  readonly acks: SocketAck[];
  readonly connections: SocketConnection[];
  readonly openSocketConnections: number;
  /** The next `count` Web API calls (of `method`, when given) get 429 with Retry-After. */
  rateLimitNext(count: number, retryAfterSec: number, method?: string): void;
  /**
   * The next `count` calls of `method` (a Web API method, or `response_url`) are refused with
   * Slack's `error` (e.g. `invalid_blocks`), whatever they carry: Slack may refuse what the
   * documented limits allow.
   */
  refuseNext(count: number, error: string, method: string): void;
  /**
   * The next `count` Web API calls (of `method`, when given) fail. `answer` says how: `http`
   * (default) an HTTP `status` (default 500); `ok-false` HTTP 200 with `{ ok: false, error }`
   * (default `internal_error`, S-INTERNAL-ERROR); `never` no answer at all, the connection held
   * open until the client gives up (S-NO-ANSWER). `afterStoring`: the call is carried out first
   * (the message is stored), as when Slack fails after writing; otherwise nothing happens.
   * `method: 'response_url'` (with afterStoring) fails response_url posts the same way.
   */
  failNext(count: number, options?: FailureOptions): void;
  /** Puts the bot in (or takes it out of) a channel. */
  setMembership(channel: string, member: boolean): void;
  /** Sets a user group's members (an admin edits the group in Slack). */
  setUserGroup(id: string, users: string[]): void;
  channelMessages(channel: string): EmulatedMessage[];
  /**
   * The results shown in a channel, in the order they arrived: a command's answer replaced
   * through its response_url, or a new top-level post.
   */
  resultsIn(channel: string): EmulatedMessage[];
  /** The messages posted through one response_url (the answers to one command or click). */
  answersTo(responseUrl: string): EmulatedMessage[];
  /** A response_url as Slack hands out with a command, for tests without an app. */
  responseUrlFor(channel: string, user: string): string;
  /** Makes a response_url as old as `ageMs` (past 30 minutes it answers `expired_url`). */
  ageResponseUrl(responseUrl: string, ageMs: number): void;
  sendSlashCommand(options: SlashCommandOptions): Promise<SentRequest>;
  clickButton(options: ButtonClickOptions): Promise<SentRequest>;
  /** Posts a raw body with the given signature headers, e.g. to replay a captured request. */
  deliver(options: { appUrl: string; rawBody: string; timestamp?: number; signature?: string; contentType?: string }): Promise<{ status: number; body: string }>;
  /** Polls `predicate` until it returns something truthy; throws after `timeoutMs` (default 5000). */
  waitFor<T>(predicate: (emulator: SlackEmulator) => T | undefined | null | false, options?: WaitOptions): Promise<T>;
  /** Sends `disconnect` on every Socket Mode connection. */
  disconnectSockets(reason?: string): void;
  close(): Promise<void>;
}

export interface FailureOptions {
  method?: string;
  status?: number;
  afterStoring?: boolean;
  answer?: 'http' | 'ok-false' | 'never';
  error?: string;
}

interface ResponseUrlEntry {
  channel: string;
  user: string;
  /** The clicked message, which `replace_original` replaces; a slash command's URL has none (S-RESPONSE-URL-REPLACE). */
  messageTs?: string;
  uses: number;
  issuedAt: number;
}

/**
 * Slack accepts at most five posts to one response_url, within 30 minutes of the command or click
 * (https://docs.slack.dev/interactivity/handling-user-interaction).
 */
const RESPONSE_URL_USES = 5;
const RESPONSE_URL_TTL_MS = 30 * 60_000;

export async function startSlackEmulator(options: SlackEmulatorOptions = {}): Promise<SlackEmulator> {
  const emulator = new Emulator(options);
  await emulator.listen(options.host ?? '127.0.0.1');
  return emulator;
}

class Emulator implements SlackEmulator {
  url = '';
  apiUrl = '';
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly calls: ApiCall[] = [];
  readonly messages: EmulatedMessage[] = [];
  readonly #files = new Map<string, EmulatedFile>();
  readonly invocations: Invocation[] = [];
  readonly acks: SocketAck[] = [];
  readonly connections: SocketConnection[] = [];
  readonly #server: Server;
  readonly #socket: SocketModeServer;
  readonly #responseUrls = new Map<string, ResponseUrlEntry>();
  readonly #rateLimits: { remaining: number; retryAfterSec: number; method?: string }[] = [];
  readonly #refusals: { remaining: number; error: string; method: string }[] = [];
  readonly #failures: (Required<Pick<FailureOptions, 'status' | 'afterStoring' | 'answer' | 'error'>> & { remaining: number; method?: string })[] = [];
  readonly #missingScopes: Set<string>;
  readonly #userGroups: Map<string, string[]>;
  readonly #conversations: Map<string, EmulatedConversation> | undefined;
  readonly #historyLimits: 'tier3' | 'non-marketplace';
  readonly #fileShareDelayMs: number;
  readonly #pendingShares = new Set<NodeJS.Timeout>();
  readonly #postGapMs: number | undefined;
  readonly #lastPost = new Map<string, number>();
  readonly #lastRead = new Map<string, number>();
  readonly #ackTimeoutMs: number;
  readonly #tsBase = nowSeconds();
  #tsCounter = 0;
  #seq = 0;

  constructor(options: SlackEmulatorOptions) {
    this.botToken = options.botToken ?? `xoxb-emulated-${randomBytes(8).toString('hex')}`;
    this.appToken = options.appToken ?? `xapp-1-emulated-${randomBytes(8).toString('hex')}`;
    this.signingSecret = options.signingSecret ?? randomBytes(16).toString('hex');
    this.#conversations = options.channels || options.conversations ? conversationsFrom(options) : undefined;
    this.#historyLimits = options.historyLimits ?? 'tier3';
    this.#fileShareDelayMs = options.fileShareDelayMs ?? 0;
    this.#postGapMs = options.postGapMs;
    this.#ackTimeoutMs = options.ackTimeoutMs ?? 3000;
    this.#missingScopes = new Set(options.missingScopes ?? []);
    this.#userGroups = new Map(Object.entries(options.userGroups ?? {}));
    this.#server = createServer((req, res) => {
      this.#route(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { ok: false, error: 'internal_error', detail: String(err) });
      });
    });
    this.#socket = new SocketModeServer(
      {
        onConnection: (id) => this.connections.push({ seq: this.#nextSeq(), at: Date.now(), id, open: true }),
        onClose: (id) => {
          const c = this.connections.find((x) => x.id === id);
          if (c) c.open = false;
        },
        onAck: (envelopeId, payload) => this.acks.push({ seq: this.#nextSeq(), at: Date.now(), envelopeId, payload }),
      },
      { appId: EMULATED.appId, pingIntervalMs: options.pingIntervalMs ?? 10_000 },
    );
    this.#server.on('upgrade', (req, socket, head) => this.#socket.handleUpgrade(req, socket, head));
  }

  async listen(host: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, host, () => resolve());
    });
    const { port } = this.#server.address() as AddressInfo;
    const hostPart = host.includes(':') ? `[${host}]` : host;
    this.url = `http://${hostPart}:${port}`;
    this.apiUrl = `${this.url}/api/`;
  }

  get files(): EmulatedFile[] {
    return [...this.#files.values()];
  }

  get openSocketConnections(): number {
    return this.#socket.openConnections;
  }

  rateLimitNext(count: number, retryAfterSec: number, method?: string): void {
    this.#rateLimits.push({ remaining: count, retryAfterSec, ...(method ? { method } : {}) });
  }

  refuseNext(count: number, error: string, method: string): void {
    this.#refusals.push({ remaining: count, error, method });
  }

  #refusal(method: string): string | undefined {
    const refusal = this.#refusals.find((r) => r.remaining > 0 && r.method === method);
    if (!refusal) return undefined;
    refusal.remaining -= 1;
    return refusal.error;
  }

  failNext(count: number, options: FailureOptions = {}): void {
    this.#failures.push({
      remaining: count,
      status: options.status ?? 500,
      afterStoring: options.afterStoring ?? false,
      answer: options.answer ?? 'http',
      error: options.error ?? 'internal_error',
      ...(options.method ? { method: options.method } : {}),
    });
  }

  setMembership(channel: string, member: boolean): void {
    const known = this.#conversations?.get(channel);
    if (known) known.member = member;
  }

  setUserGroup(id: string, users: string[]): void {
    this.#userGroups.set(id, [...users]);
  }

  channelMessages(channel: string): EmulatedMessage[] {
    return this.messages.filter((m) => m.channel === channel);
  }

  resultsIn(channel: string): EmulatedMessage[] {
    const arrived = (m: EmulatedMessage) => m.updates.at(-1)?.seq ?? m.seq;
    const stillAnswer = (m: EmulatedMessage) => answerTag(m) !== undefined && !m.updates.length;
    return this.channelMessages(channel)
      .filter((m) => !m.threadTs && !m.ephemeral && !m.deleted && m.via !== 'ack' && !stillAnswer(m))
      .sort((a, b) => arrived(a) - arrived(b));
  }

  answersTo(responseUrl: string): EmulatedMessage[] {
    const key = answerKey(responseUrl);
    return this.messages.filter((m) => !m.deleted && (m.responseUrl === responseUrl || answerTag(m) === key));
  }

  async waitFor<T>(predicate: (emulator: SlackEmulator) => T | undefined | null | false, options: WaitOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 5000;
    const intervalMs = options.intervalMs ?? 20;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = predicate(this);
      if (value) return value;
      if (Date.now() >= deadline) throw new Error(`Slack emulator: waited ${timeoutMs} ms for ${options.description ?? 'a condition'}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  disconnectSockets(reason?: string): void {
    this.#socket.disconnectAll(reason);
  }

  async close(): Promise<void> {
    for (const timer of this.#pendingShares) clearTimeout(timer);
    this.#pendingShares.clear();
    await this.#socket.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async sendSlashCommand(o: SlashCommandOptions): Promise<SentRequest> {
    const user = o.user ?? 'U0OPS1';
    const channel = o.channel ?? 'C0OPS';
    const command = o.command ?? '/maas';
    const responseUrl = this.#issueResponseUrl({ channel, user });
    const fields: Record<string, string> = {
      token: 'emulated-verification-token',
      team_id: EMULATED.teamId,
      team_domain: EMULATED.teamDomain,
      channel_id: channel,
      channel_name: o.channelName ?? channel.toLowerCase(),
      user_id: user,
      user_name: o.userName ?? user.toLowerCase(),
      command,
      text: o.text,
      api_app_id: EMULATED.appId,
      is_enterprise_install: 'false',
      response_url: responseUrl,
      trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
    };
    const invocation: Invocation = {
      seq: this.#nextSeq(),
      at: Date.now(),
      kind: 'slash_command',
      via: o.viaSocket ? 'socket' : 'http',
      user,
      channel,
      command,
      text: o.text,
      responseUrl,
    };
    this.invocations.push(invocation);
    if (o.viaSocket) return this.#viaSocket('slash_commands', fields, invocation);
    const rawBody = new URLSearchParams(fields).toString();
    return this.#signedPost(o, rawBody, invocation);
  }

  async clickButton(o: ButtonClickOptions): Promise<SentRequest> {
    const user = o.user ?? 'U0OPS1';
    const channel = o.channel ?? 'C0OPS';
    const message = this.messages.find((m) => m.ts === o.messageTs && m.channel === channel);
    const button = message ? findButton(message.blocks, o.actionId) : undefined;
    const responseUrl = this.#issueResponseUrl({ channel, user, messageTs: o.messageTs });
    const actionTs = `${nowSeconds()}.${String(++this.#tsCounter).padStart(6, '0')}`;
    const payload = {
      type: 'block_actions',
      user: { id: user, username: o.userName ?? user.toLowerCase(), name: o.userName ?? user.toLowerCase(), team_id: EMULATED.teamId },
      api_app_id: EMULATED.appId,
      token: 'emulated-verification-token',
      container: { type: 'message', message_ts: o.messageTs, channel_id: channel, is_ephemeral: message?.ephemeral ?? false },
      trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
      team: { id: EMULATED.teamId, domain: EMULATED.teamDomain },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: channel, name: channel.toLowerCase() },
      message: message
        ? { type: 'message', user: EMULATED.botUserId, bot_id: EMULATED.botId, ts: message.ts, text: message.text, ...(message.blocks ? { blocks: message.blocks } : {}), ...(message.threadTs ? { thread_ts: message.threadTs } : {}) }
        : { type: 'message', ts: o.messageTs, text: '' },
      state: { values: {} },
      response_url: responseUrl,
      actions: [
        {
          type: 'button',
          action_id: o.actionId,
          block_id: o.blockId ?? button?.blockId ?? 'emulated-block',
          text: { type: 'plain_text', text: button?.text ?? o.actionId, emoji: true },
          ...(o.value ?? button?.value ? { value: o.value ?? button?.value } : {}),
          action_ts: actionTs,
        },
      ],
      ...o.payloadOverrides,
    };
    const invocation: Invocation = {
      seq: this.#nextSeq(),
      at: Date.now(),
      kind: 'block_actions',
      via: o.viaSocket ? 'socket' : 'http',
      user,
      channel,
      actionId: o.actionId,
      messageTs: o.messageTs,
      responseUrl,
      ...(payload.actions[0]?.value ? { value: payload.actions[0].value } : {}),
    };
    this.invocations.push(invocation);
    if (o.viaSocket) return this.#viaSocket('interactive', payload, invocation);
    const rawBody = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return this.#signedPost(o, rawBody, invocation);
  }

  async deliver(o: { appUrl: string; rawBody: string; timestamp?: number; signature?: string; contentType?: string }): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = { 'content-type': o.contentType ?? 'application/x-www-form-urlencoded' };
    if (o.timestamp !== undefined) headers['x-slack-request-timestamp'] = String(o.timestamp);
    if (o.signature !== undefined) headers['x-slack-signature'] = o.signature;
    const res = await fetch(eventsUrl(o.appUrl), { method: 'POST', headers, body: o.rawBody });
    return { status: res.status, body: await res.text() };
  }

  async #signedPost(
    o: { appUrl?: string; signingSecret?: string; badSignature?: boolean; unsigned?: boolean; timestamp?: number },
    rawBody: string,
    invocation: Invocation,
  ): Promise<SentRequest> {
    if (!o.appUrl) throw new Error('Slack emulator: appUrl is needed to send over HTTP');
    const timestamp = o.timestamp ?? nowSeconds();
    const secret = o.badSignature ? `${o.signingSecret ?? this.signingSecret}-wrong` : (o.signingSecret ?? this.signingSecret);
    const signature = o.unsigned ? undefined : slackSignature(secret, timestamp, rawBody);
    const { status, body } = await this.deliver({
      appUrl: o.appUrl,
      rawBody,
      ...(o.unsigned ? {} : { timestamp, signature }),
    });
    invocation.status = status;
    if (status === 200) this.#postAckBody(body, invocation);
    return { status, body, responseUrl: invocation.responseUrl, rawBody, timestamp, ...(signature ? { signature } : {}) };
  }

  async #viaSocket(type: 'slash_commands' | 'interactive', payload: Record<string, unknown>, invocation: Invocation): Promise<SentRequest> {
    const result = await this.#socket.send({ type, payload }, this.#ackTimeoutMs);
    invocation.envelopeId = result.envelopeId;
    invocation.acked = result.acked;
    invocation.status = result.acked ? 200 : 408;
    if (result.payload) this.#postAckPayload(result.payload, invocation);
    return {
      status: invocation.status,
      body: result.payload ? JSON.stringify(result.payload) : '',
      responseUrl: invocation.responseUrl,
      rawBody: JSON.stringify(payload),
      timestamp: nowSeconds(),
      envelopeId: result.envelopeId,
      acked: result.acked,
      ...(result.payload ? { ackPayload: result.payload } : {}),
    };
  }

  /** A non-empty ack body is shown to the user, as Slack does with an immediate response. */
  #postAckBody(body: string, invocation: Invocation): void {
    if (!body.trim()) return;
    let payload: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(body);
      payload = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : { text: String(parsed) };
    } catch {
      payload = { text: body };
    }
    this.#postAckPayload(payload, invocation);
  }

  #postAckPayload(payload: Record<string, unknown>, invocation: Invocation): void {
    if (invocation.kind !== 'slash_command' || contentProblem(payload)) return;
    const inChannel = payload.response_type === 'in_channel';
    addMessage(this.#state, {
      channel: invocation.channel,
      text: typeof payload.text === 'string' ? payload.text : '',
      blocks: blocksOf(payload.blocks),
      threadTs: undefined,
      ephemeral: !inChannel,
      ...(inChannel ? {} : { user: invocation.user }),
      via: 'ack',
      responseUrl: invocation.responseUrl,
    });
  }

  responseUrlFor(channel: string, user: string): string {
    return this.#issueResponseUrl({ channel, user });
  }

  ageResponseUrl(responseUrl: string, ageMs: number): void {
    const entry = this.#responseUrls.get(responseUrl.slice(`${this.url}/response/`.length));
    if (entry) entry.issuedAt = Date.now() - ageMs;
  }

  #issueResponseUrl(entry: Omit<ResponseUrlEntry, 'uses' | 'issuedAt'>): string {
    const id = randomBytes(12).toString('hex');
    this.#responseUrls.set(id, { ...entry, uses: 0, issuedAt: Date.now() });
    return `${this.url}/response/${id}`;
  }

  #nextSeq(): number {
    this.#seq += 1;
    return this.#seq;
  }

  /**
   * Slack's pacing the emulator enforces when asked: posts to one channel (postGapMs, S-POST-RATE)
   * and a non-Marketplace app's history reads (S-HISTORY-NON-MARKETPLACE). Each method apart.
   */
  #paceProblem(method: string, params: Record<string, unknown>): { retryAfterSec: number } | undefined {
    const now = Date.now();
    if (method === 'chat.postMessage' && this.#postGapMs !== undefined && typeof params.channel === 'string') {
      const last = this.#lastPost.get(params.channel);
      if (last !== undefined && now - last < this.#postGapMs) return { retryAfterSec: 1 };
      this.#lastPost.set(params.channel, now);
    }
    if ((method === 'conversations.history' || method === 'conversations.replies') && this.#historyLimits === 'non-marketplace') {
      const last = this.#lastRead.get(method);
      if (last !== undefined && now - last < 60_000) return { retryAfterSec: Math.ceil((60_000 - (now - last)) / 1000) };
      this.#lastRead.set(method, now);
    }
    return undefined;
  }

  get #state(): WebApiState {
    const conversations = this.#conversations;
    return {
      conversation: (id) => (conversations ? conversations.get(id) : { id, private: false, member: true }),
      historyPageLimit: this.#historyLimits === 'non-marketplace' ? 15 : 1000,
      missingScopes: this.#missingScopes,
      userGroups: this.#userGroups,
      messages: this.messages,
      nextTs: () => `${this.#tsBase}.${String(++this.#tsCounter).padStart(6, '0')}`,
      nextSeq: () => this.#nextSeq(),
      connectionUrl: () => this.#socket.issueUrl(this.url.replace(/^http/, 'ws')),
      files: this.#files,
      uploadUrl: (id) => `${this.url}/upload/${id}`,
      fileShareDelayMs: this.#fileShareDelayMs,
      later: (share, ms) => {
        const timer = setTimeout(() => {
          this.#pendingShares.delete(timer);
          share();
        }, ms);
        this.#pendingShares.add(timer);
      },
    };
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const raw = await readBody(req);
    if (url.pathname.startsWith('/api/')) return this.#webApi(url, req, raw, res);
    if (url.pathname.startsWith('/response/') && req.method === 'POST') return this.#responseUrl(url.pathname.slice('/response/'.length), raw, res);
    if (url.pathname.startsWith('/upload/') && req.method === 'POST') return this.#upload(url.pathname.slice('/upload/'.length), raw, res);
    sendJson(res, 404, { ok: false, error: 'not_found' });
  }

  #webApi(url: URL, req: IncomingMessage, raw: string, res: ServerResponse): void {
    const method = url.pathname.slice('/api/'.length);
    const params = parseParams(req.headers['content-type'], raw, url.searchParams);
    const token = bearer(req.headers.authorization) ?? (typeof params.token === 'string' ? params.token : undefined);
    delete params.token;
    const auth = this.#tokenKind(token);
    const limit = this.#rateLimits.find((l) => l.remaining > 0 && (!l.method || l.method === method));
    if (limit) {
      limit.remaining -= 1;
      const response = { ok: false, error: 'ratelimited' };
      this.calls.push({ seq: this.#nextSeq(), at: Date.now(), method, params, auth, status: 429, response });
      sendJson(res, 429, response, { 'retry-after': String(limit.retryAfterSec) });
      return;
    }
    const paced = this.#paceProblem(method, params);
    if (paced) {
      const response = { ok: false, error: 'ratelimited' };
      this.calls.push({ seq: this.#nextSeq(), at: Date.now(), method, params, auth, status: 429, response });
      sendJson(res, 429, response, { 'retry-after': String(paced.retryAfterSec) });
      return;
    }
    const failure = this.#failures.find((f) => f.remaining > 0 && (!f.method || f.method === method));
    if (failure) {
      failure.remaining -= 1;
      const carriedOut = failure.afterStoring ? callMethod(method, params, auth, this.#state) : { ok: false, error: 'not carried out' };
      const status = failure.answer === 'http' ? failure.status : failure.answer === 'ok-false' ? 200 : 0;
      this.calls.push({ seq: this.#nextSeq(), at: Date.now(), method, params, auth, status, response: carriedOut });
      if (failure.answer === 'never') return; // held open: closeAllConnections ends it
      if (failure.answer === 'ok-false') return sendJson(res, 200, { ok: false, error: failure.error });
      res.writeHead(failure.status, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Internal Server Error</body></html>');
      return;
    }
    const refused = this.#refusal(method);
    const response = refused ? { ok: false, error: refused } : callMethod(method, params, auth, this.#state);
    this.calls.push({ seq: this.#nextSeq(), at: Date.now(), method, params, auth, status: 200, response });
    // The scopes of the token on every answer (S-SCOPES-HEADER); @slack/web-api reads them into response_metadata.scopes.
    sendJson(res, 200, response, auth === 'bot' ? { 'x-oauth-scopes': this.#grantedScopes().join(',') } : {});
  }

  /** The upload URL takes the bytes as the body, with no token: the URL itself is the permission. */
  #upload(id: string, raw: string, res: ServerResponse): void {
    const file = this.#files.get(id);
    if (!file || file.content !== undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    file.content = raw;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${Buffer.byteLength(raw, 'utf8')}`);
  }

  #grantedScopes(): string[] {
    return MANIFEST_BOT_SCOPES.filter((scope) => !this.#missingScopes.has(scope));
  }

  #tokenKind(token: string | undefined): TokenKind {
    if (!token) return 'none';
    if (token === this.botToken) return 'bot';
    if (token === this.appToken) return 'app';
    return 'invalid';
  }

  #responseUrl(id: string, raw: string, res: ServerResponse): void {
    const entry = this.#responseUrls.get(id);
    if (!entry || Date.now() - entry.issuedAt > RESPONSE_URL_TTL_MS) return sendJson(res, 404, { ok: false, error: 'expired_url' });
    if (entry.uses >= RESPONSE_URL_USES) return sendJson(res, 404, { ok: false, error: 'used_url' });
    let payload: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
      payload = parsed as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, { ok: false, error: 'invalid_payload' });
    }
    const problem = this.#refusal('response_url') ?? (payload.delete_original ? undefined : contentProblem(payload));
    if (problem) return sendJson(res, 400, { ok: false, error: problem });
    entry.uses += 1;
    // Only a click's URL edits a message; a slash command's posts anew, whatever it asks (S-RESPONSE-URL-REPLACE).
    const original = entry.messageTs ? this.messages.find((m) => m.ts === entry.messageTs && m.channel === entry.channel) : undefined;
    if (original && isTrue(payload.delete_original)) {
      original.deleted = true;
    } else if (original && isTrue(payload.replace_original)) {
      applyUpdate(this.#state, original, { text: typeof payload.text === 'string' ? payload.text : '', blocks: blocksOf(payload.blocks), via: 'response_url' });
    } else {
      const inChannel = payload.response_type === 'in_channel';
      addMessage(this.#state, {
        channel: entry.channel,
        text: typeof payload.text === 'string' ? payload.text : '',
        blocks: blocksOf(payload.blocks),
        threadTs: typeof payload.thread_ts === 'string' ? payload.thread_ts : undefined,
        ephemeral: !inChannel,
        ...(inChannel ? {} : { user: entry.user }),
        via: 'response_url',
        responseUrl: `${this.url}/response/${id}`,
      });
    }
    const failure = this.#failures.find((f) => f.remaining > 0 && f.afterStoring && f.method === 'response_url');
    if (failure) {
      failure.remaining -= 1;
      if (failure.answer === 'never') return;
      res.writeHead(failure.status, { 'content-type': 'text/html; charset=utf-8' }).end('<html><body>Internal Server Error</body></html>');
      return;
    }
    sendJson(res, 200, { ok: true });
  }
}

function conversationsFrom(options: SlackEmulatorOptions): Map<string, EmulatedConversation> {
  const all = new Map<string, EmulatedConversation>();
  for (const id of options.channels ?? []) all.set(id, { id, private: false, member: true });
  for (const c of options.conversations ?? []) all.set(c.id, { id: c.id, private: c.private ?? false, member: c.member ?? true });
  return all;
}

/** The command a bot's own answer belongs to, from the tag it carries in its metadata (`answer_to`). */
function answerTag(m: EmulatedMessage): string | undefined {
  const tag = m.metadata?.event_payload.answer_to;
  return typeof tag === 'string' ? tag : undefined;
}

function eventsUrl(appUrl: string): string {
  const url = new URL(appUrl);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/slack/events';
  return url.toString();
}

function findButton(blocks: unknown[] | undefined, actionId: string): { blockId?: string; text?: string; value?: string } | undefined {
  for (const block of blocks ?? []) {
    const b = block as { type?: string; block_id?: string; elements?: unknown[]; accessory?: unknown };
    const candidates = [...(b.elements ?? []), ...(b.accessory ? [b.accessory] : [])] as { action_id?: string; text?: { text?: string }; value?: string }[];
    const hit = candidates.find((e) => e.action_id === actionId);
    if (hit) {
      return {
        ...(b.block_id ? { blockId: b.block_id } : {}),
        ...(hit.text?.text ? { text: hit.text.text } : {}),
        ...(hit.value ? { value: hit.value } : {}),
      };
    }
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseParams(contentType: string | undefined, raw: string, query: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = Object.fromEntries(query);
  if (!raw) return params;
  if (contentType?.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null) Object.assign(params, parsed);
    } catch {
      params.__invalid_json = true;
    }
    return params;
  }
  return Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
}

function bearer(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)$/i);
  return match?.[1];
}

function isTrue(v: unknown): boolean {
  return v === true || v === 'true';
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
