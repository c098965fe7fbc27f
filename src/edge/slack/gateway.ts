import type { KnownBlock } from '@slack/types';
import { ErrorCode, LogLevel, WebClient, WebClientEvent, type Logger as SlackLogger, type RetryOptions, type WebClientOptions } from '@slack/web-api';
import type { AlertSender } from '../alerts/alert-sender.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { Metrics } from '../../engine/metrics.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import type { FileAttachment } from './evidence-files.ts';
import { uploadTextFile } from './file-upload.ts';
import { memoryAnswerBoard, type AnswerBoard } from './answer-board.ts';
import { CHANNEL_INTERVAL_MS, localPacer, type ChannelPacer } from './channel-pacer.ts';
import { fitMessage, sendWithFallback, slackErrorOf, type OutgoingMessage } from './message-budget.ts';
import { UPDATE_TEXT_LIMIT } from './message-limits.ts';
import { clipText } from './mrkdwn.ts';
import { noBlindRetries, outcomeUnknown, postOnce } from './post-once.ts';
import { postToResponseUrl, type ResponseUrlPost } from './response-url.ts';

/*
 * The one way the bot talks to Slack. It owns the process's WebClients (the Bolt app is handed
 * the main one), the retry policy (a call whose outcome is unknown never repeated blindly:
 * post-once.ts reads the channel back instead), the pacing of each channel (shared by every
 * process through a ChannelPacer in Redis), the one redaction pass every outgoing payload gets,
 * and the message budget.
 *
 * Both clients reject a 429 at once: left to itself the SDK pauses a client's whole queue for a
 * 429's Retry-After (S-429-PAUSES-CLIENT), so a chat.update storm in one channel would hold every
 * post of the process. The gateway waits a 429 out itself, for that method in that channel only
 * (S-429-PER-METHOD), and sends the call again; a read (the second client) is not sent again:
 * post-once.ts then treats the channel as unreadable.
 */

/** What the Slack transport records: failed calls and 429s. */
export type SlackMetrics = Pick<Metrics, 'recordSlackError' | 'recordSlackRateLimited'>;

export interface SlackGatewayOptions {
  /** The bot token, revealed here at the point of use. */
  token: string;
  /** SLACK_API_URL; default Slack's. */
  slackApiUrl?: string;
  redact: Redactor;
  log: Logger;
  /**
   * Least time between two messages to one channel. Slack allows about one message a second per
   * channel (https://docs.slack.dev/apis/web-api/rate-limits); default 1100 ms.
   */
  intervalMs?: number;
  /**
   * The SDK's retries of a request that never left (network errors before sending); `retries` is
   * also how many 429s in a row one call waits out before it fails. Default 5, backing off from 500 ms.
   */
  retryConfig?: RetryOptions;
  /** Tries of an update (idempotent) whose outcome was unknown (a 5xx, a dropped connection); default 3. */
  updateAttempts?: number;
  /** Counts a message Slack refused for its content, replaced by a plain fallback (the metrics). */
  onFallback?: (slackError: string) => void;
  metrics?: SlackMetrics;
  /** The channel slots every process shares (channel-pacer.ts redisPacer); default this process's own, `intervalMs` apart. */
  pacer?: ChannelPacer;
  /** Where commands' running answers are, shared by bot and workers (answer-board.ts); default in this process's memory. */
  answers?: AnswerBoard;
  /** How long one Web API call may take before its outcome counts as unknown; default 15 s. */
  timeoutMs?: number;
}

export interface SlackGatewayStats {
  /** Web API calls that carry a message (posts, updates, ephemeral answers, file shares). */
  calls: number;
  /** 429s Slack answered (posts and updates waited out, reads given up). */
  rateLimited: number;
  /** Updates folded into a later update of the same message before they went out. */
  coalesced: number;
}

export interface SlackGateway extends AlertSender {
  /** The main WebClient (a 429 rejects at once, the gateway waits it out); messages go through the methods below. */
  readonly client: WebClient;
  readonly clientOptions: WebClientOptions;
  /** Reads (conversations.history, .replies): a 429 rejects at once instead of pausing the main client. */
  readonly reader: WebClient;
  readonly stats: SlackGatewayStats;
  /** Where commands' running answers are (answer-board.ts). */
  readonly answers: AnswerBoard;
  /** A new message (in a thread with `threadTs`). `ts` is '' when Slack may have stored it but the channel could not be read to tell. */
  post(channel: string, message: OutgoingMessage & { threadTs?: string | undefined }, how?: SendHow): Promise<{ ts: string }>;
  /** Edits one of the bot's own messages; a message without blocks clears the old ones (S-UPDATE-BLOCKS). */
  update(channel: string, ts: string, message: OutgoingMessage, how?: SendHow): Promise<void>;
  /** Takes one of the bot's own messages down. */
  remove(channel: string, ts: string): Promise<void>;
  postEphemeral(channel: string, user: string, message: OutgoingMessage, how?: SendHow): Promise<void>;
  /** A post to a command's or click's response_url; throws a ResponseUrlError when it was refused or not answered. */
  respond(responseUrl: string, message: OutgoingMessage, how: ResponseUrlPost, what?: string): Promise<void>;
  upload(channel: string, threadTs: string | undefined, file: FileAttachment): Promise<void>;
  /** Sends what is queued (up to `drainMs`, default 5 s), then fails whatever is left. */
  close(drainMs?: number): Promise<void>;
}

export interface SendHow {
  /** What is being sent, for the log: `post a plan`. */
  what?: string;
  /**
   * Wait its turn in the channel's line (default): alerts, the thread of an `all` answer. A
   * command's own answer, its result and a plan go at once, as a person waits for them; a 429 is
   * still waited out. Every post takes a slot of the channel either way (S-POST-RATE).
   */
  paced?: boolean;
  /** The command this message answers (answer-board.ts answerKey): its metadata names it. */
  answerTo?: string;
  /** The command whose result this is, posted anew: its metadata names it. */
  resultOf?: string;
}

/** A Slack call failed; `slackError` is Slack's code (message_not_found…) when Slack answered. */
export class SlackSendError extends Error {
  constructor(
    message: string,
    readonly slackError: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SlackSendError';
  }
}

const DEFAULT_RETRY: RetryOptions = { retries: 5, factor: 2, minTimeout: 500, maxTimeout: 30_000, randomize: true };

export function createSlackGateway(options: SlackGatewayOptions): SlackGateway {
  return new Gateway(options);
}

interface Task {
  /** `channel ts` of an update, so that a later update of the same message can replace it while it waits. */
  updateOf?: string;
  message: OutgoingMessage;
  send: (message: OutgoingMessage) => Promise<unknown>;
  waiters: { resolve: (value: unknown) => void; reject: (err: unknown) => void }[];
}

interface Lane {
  queue: Task[];
  running: boolean;
}

class Gateway implements SlackGateway {
  readonly client: WebClient;
  readonly clientOptions: WebClientOptions;
  readonly reader: WebClient;
  readonly answers: AnswerBoard;
  readonly stats: SlackGatewayStats = { calls: 0, rateLimited: 0, coalesced: 0 };
  readonly #pacer: ChannelPacer;
  readonly #lanes = new Map<string, Lane>();
  readonly #timers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  /** `method channel` → when Slack's Retry-After for it ends (ms). */
  readonly #limitedUntil = new Map<string, number>();
  readonly #options: SlackGatewayOptions;
  readonly #interval: number;
  readonly #log: Logger;
  #closed = false;

  constructor(options: SlackGatewayOptions) {
    this.#options = options;
    this.#interval = options.intervalMs ?? CHANNEL_INTERVAL_MS;
    this.#log = options.log.child({ component: 'slack' });
    this.clientOptions = {
      slackApiUrl: options.slackApiUrl ?? 'https://slack.com/api/',
      retryConfig: noBlindRetries(options.retryConfig ?? DEFAULT_RETRY),
      timeout: options.timeoutMs ?? 15_000,
      logger: quietLogger(options.log.child({ component: 'slack-web-api' })),
    };
    this.#pacer = options.pacer ?? localPacer(this.#interval);
    this.answers = options.answers ?? memoryAnswerBoard();
    this.client = new WebClient(options.token, { ...this.clientOptions, rejectRateLimitedCalls: true });
    this.reader = new WebClient(options.token, { ...this.clientOptions, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
    const onRateLimited = (waited: boolean) => (retryAfterSec: number, request?: { url?: string }) => {
      this.stats.rateLimited += 1;
      options.metrics?.recordSlackRateLimited(methodOf(request?.url));
      this.#log.warn({ retryAfterSec, method: methodOf(request?.url) }, waited ? 'Slack rate limit: this method waits in this channel as Retry-After asks' : 'Slack rate limit on a read: given up, nothing else waits');
    };
    this.client.on(WebClientEvent.RATE_LIMITED, onRateLimited(true));
    this.reader.on(WebClientEvent.RATE_LIMITED, onRateLimited(false));
  }

  async post(channel: string, message: OutgoingMessage & { threadTs?: string | undefined }, how: SendHow = {}): Promise<{ ts: string }> {
    const what = how.what ?? `post to ${channel}`;
    const clean = this.#clean(message);
    const thread = message.threadTs ? { thread_ts: message.threadTs } : {};
    const once = { log: this.#log, reader: this.reader, ...(how.answerTo ? { answerTo: how.answerTo } : {}), ...(how.resultOf ? { resultOf: how.resultOf } : {}), onError: (method: string, err: unknown) => this.#failed(method, err) };
    const res = (await this.#enqueue(channel, how.paced ?? true, {
      message: clean,
      send: async (m) => {
        await this.#takeSlot(channel, !(how.paced ?? true));
        return sendWithFallback((fitted) => this.#afterRateLimits('chat.postMessage', channel, () => postOnce(this.client, { channel, ...thread, ...body(fitted) }, once)), m, this.#budget(what));
      },
      waiters: [],
    }).catch((err: unknown) => {
      throw toSendError(err);
    })) as { ts?: string };
    return { ts: res.ts ?? '' };
  }

  async update(channel: string, ts: string, message: OutgoingMessage, how: SendHow = {}): Promise<void> {
    const what = how.what ?? `update a message in ${channel}`;
    const clean = this.#clean(message);
    const key = `${channel} ${ts}`;
    const waiting = this.#lane(channel).queue.find((t) => t.updateOf === key);
    if (waiting) {
      waiting.message = clean;
      this.stats.coalesced += 1;
      await new Promise((resolve, reject) => waiting.waiters.push({ resolve, reject }));
      return;
    }
    await this.#enqueue(channel, how.paced ?? true, {
      updateOf: key,
      message: clean,
      send: (m) => sendWithFallback((fitted) => this.#idempotent('chat.update', channel, () => this.client.chat.update({ channel, ts, ...updateBody(fitted) })), m, this.#budget(what)),
      waiters: [],
    });
  }

  async remove(channel: string, ts: string): Promise<void> {
    await this.#call('chat.delete', channel, () => this.client.chat.delete({ channel, ts }));
  }

  async postEphemeral(channel: string, user: string, message: OutgoingMessage, how: SendHow = {}): Promise<void> {
    const what = how.what ?? 'answer one person';
    const clean = this.#clean(message);
    await this.#enqueue(channel, how.paced ?? true, {
      message: clean,
      send: (m) => sendWithFallback((fitted) => this.#call('chat.postEphemeral', channel, () => this.client.chat.postEphemeral({ channel, user, ...body(fitted) })), m, this.#budget(what)),
      waiters: [],
    });
  }

  async respond(responseUrl: string, message: OutgoingMessage, how: ResponseUrlPost, what = 'answer through the response_url'): Promise<void> {
    // Refused content is not retried here: the caller falls back to the Web API, which has the plain fallback.
    await postToResponseUrl(responseUrl, fitMessage(this.#clean(message)), how).catch((err: unknown) => {
      this.#log.debug({ what, err: describeError(err) }, 'the response_url refused the post');
      throw err;
    });
  }

  async upload(channel: string, threadTs: string | undefined, file: FileAttachment): Promise<void> {
    const clean = { ...file, title: this.#options.redact(file.title), content: this.#options.redact(file.content) };
    // Files follow their message at once, as before the gateway.
    await this.#enqueue(channel, false, {
      message: { text: clean.title },
      send: async () => {
        await this.#takeSlot(channel, true);
        return this.#call('files.completeUploadExternal', channel, () => uploadTextFile(this.client, { channel, threadTs }, clean));
      },
      waiters: [],
    });
  }

  async close(drainMs = 5_000): Promise<void> {
    this.#closed = true;
    const deadline = Date.now() + drainMs;
    while ([...this.#lanes.values()].some((l) => l.queue.length || l.running) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const t of this.#timers) {
      clearTimeout(t.timer);
      t.wake();
    }
    for (const lane of this.#lanes.values()) {
      for (const task of lane.queue.splice(0)) for (const w of task.waiters) w.reject(new SlackSendError('the Slack gateway was closed before this went out', undefined));
    }
  }

  /** The one redaction pass: every string of the payload, after rendering and before the budget clips it. */
  #clean(message: OutgoingMessage): OutgoingMessage {
    const text = this.#options.redact(message.text);
    return message.blocks ? { text, blocks: redactDeep(message.blocks, this.#options.redact) } : { text };
  }

  #budget(what: string) {
    return { log: this.#log, what, onFallback: this.#options.onFallback };
  }

  /** One Web API call, 429s waited out; a failure is counted and becomes a SlackSendError naming Slack's code. */
  async #call<T>(method: string, channel: string, call: () => Promise<T>): Promise<T> {
    try {
      return await this.#afterRateLimits(method, channel, call);
    } catch (err) {
      this.#failed(method, err);
      throw toSendError(err);
    }
  }

  /** An idempotent call whose outcome was unknown is simply made again (an update shows the same thing twice at worst). */
  async #idempotent<T>(method: string, channel: string, call: () => Promise<T>): Promise<T> {
    const attempts = this.#options.updateAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#afterRateLimits(method, channel, call);
      } catch (err) {
        this.#failed(method, err);
        if (!outcomeUnknown(err) || attempt >= attempts || this.#closed) throw toSendError(err);
        await this.#sleep(this.#interval * attempt);
      }
    }
  }

  /**
   * Sends `call` once Slack's last Retry-After for this method in this channel is over, and again
   * after each 429 (Slack refused it: nothing was carried out), up to `retryConfig.retries` times.
   * Only this method in this channel waits; the lane of the channel waits with it, other
   * channels and other methods go on.
   */
  async #afterRateLimits<T>(method: string, channel: string, call: () => Promise<T>): Promise<T> {
    const key = `${method} ${channel}`;
    const most = (this.#options.retryConfig ?? DEFAULT_RETRY).retries ?? 0;
    await this.#sleep((this.#limitedUntil.get(key) ?? 0) - Date.now());
    for (let limited = 0; ; limited++) {
      try {
        return await call();
      } catch (err) {
        const retryAfterSec = retryAfterOf(err);
        if (retryAfterSec === undefined || limited >= most || this.#closed) throw err;
        this.#limitedUntil.set(key, Date.now() + retryAfterSec * 1000);
        await this.#sleep(retryAfterSec * 1000);
      }
    }
  }

  /** Counts a failed call; a 429 is counted once, by the clients' rate_limited event, not as an error too. */
  #failed(method: string, err: unknown): void {
    if (retryAfterOf(err) !== undefined) return;
    this.#options.metrics?.recordSlackError(method, err);
  }

  #enqueue(channel: string, paced: boolean, task: Task): Promise<unknown> {
    if (this.#closed) return Promise.reject(new SlackSendError('the Slack gateway is closed', undefined));
    if (!paced) {
      this.stats.calls += 1;
      return task.send(task.message).catch((err: unknown) => {
        this.#log.warn({ channel, code: slackErrorOf(err), err: describeError(err) }, 'Slack call failed');
        throw err;
      });
    }
    return new Promise((resolve, reject) => {
      const lane = this.#lane(channel);
      task.waiters.push({ resolve, reject });
      lane.queue.push(task);
      if (!lane.running) void this.#drain(channel, lane);
    });
  }

  #lane(channel: string): Lane {
    let lane = this.#lanes.get(channel);
    if (!lane) {
      lane = { queue: [], running: false };
      this.#lanes.set(channel, lane);
    }
    return lane;
  }

  /** Per channel: one call at a time (a post waits for its slot inside); a 429 being waited out holds the channel's line too. */
  async #drain(channel: string, lane: Lane): Promise<void> {
    lane.running = true;
    try {
      while (lane.queue.length) {
        // Taken out of line while in flight: an update arriving now is a new, later update.
        const task = lane.queue.shift();
        if (!task) break;
        this.stats.calls += 1;
        try {
          const value = await task.send(task.message);
          for (const w of task.waiters) w.resolve(value);
        } catch (err) {
          this.#log.warn({ channel, code: slackErrorOf(err), err: describeError(err) }, 'Slack call failed');
          for (const w of task.waiters) w.reject(err);
        }
      }
    } finally {
      lane.running = false;
    }
  }

  /** Takes the channel's next slot, shared with every process through the pacer; background traffic waits for it. */
  async #takeSlot(channel: string, urgent: boolean): Promise<void> {
    if (this.#closed) return;
    await this.#sleep(await this.#pacer.reserve(channel, urgent));
  }

  #sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => done(), ms), wake: () => done() };
      const done = () => {
        this.#timers.delete(entry);
        resolve();
      };
      this.#timers.add(entry);
    });
  }
}

/** A message as chat.postMessage, chat.update and chat.postEphemeral take it. */
function body(m: OutgoingMessage): OutgoingMessage {
  return m.blocks ? { text: m.text, blocks: m.blocks } : { text: m.text };
}

/**
 * chat.update keeps the old blocks when `blocks` is left out, so a message without blocks (a
 * plain fallback) sends an empty list; and its text is refused past 4,000 characters
 * (S-UPDATE-BLOCKS, S-UPDATE-TEXT).
 */
function updateBody(m: OutgoingMessage): { text: string; blocks: KnownBlock[] } {
  return { text: clipText(m.text, UPDATE_TEXT_LIMIT), blocks: m.blocks ?? [] };
}

/** The seconds a 429 asked to wait (the SDK's rate-limited error); undefined for any other failure. */
function retryAfterOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; retryAfter?: unknown } | null;
  return e?.code === ErrorCode.RateLimitedError && typeof e.retryAfter === 'number' ? e.retryAfter : undefined;
}

/** `chat.postMessage` from a request URL (`https://slack.com/api/chat.postMessage`). */
function methodOf(url: string | undefined): string {
  return url?.split('/').pop()?.split('?')[0] || 'other';
}

function toSendError(err: unknown): SlackSendError {
  if (err instanceof SlackSendError) return err;
  const slackError = slackErrorOf(err);
  return new SlackSendError(slackError ? `Slack refused the call: ${slackError}` : `Slack could not be reached: ${describeError(err)}`, slackError, { cause: err });
}

/** WebClient's own chatter goes to our log at debug; failures are logged by the gateway. */
function quietLogger(log: Logger): SlackLogger {
  const debug = (...msgs: unknown[]) => log.debug(msgs.map(String).join(' '));
  return { debug, info: debug, warn: debug, error: debug, setLevel: () => undefined, getLevel: () => LogLevel.DEBUG, setName: () => undefined };
}
