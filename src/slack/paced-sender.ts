import { ErrorCode, LogLevel, WebClient, type Logger as SlackLogger, type WebClientOptions } from '@slack/web-api';
import type { AlertMessage } from '../alerts/alert-message.ts';
import type { AlertSender } from '../alerts/alert-sender.ts';
import type { Logger } from '../log.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import { sendWithFallback, type OutgoingMessage } from './message-budget.ts';
import type { SlackMetrics } from './notifier.ts';
import { findPosted, newPostKey, outcomeUnknown, postMetadata } from './post-once.ts';

export interface PacedSenderOptions {
  /** The bot token, revealed here at the point of use. */
  token: string;
  /** SLACK_API_URL; default Slack's. */
  slackApiUrl?: string;
  redact: Redactor;
  log: Logger;
  /**
   * Least time between two calls to one channel. Slack allows about one message a second per
   * channel (https://docs.slack.dev/apis/web-api/rate-limits); default 1100 ms.
   */
  intervalMs?: number;
  /** Tries for a call that failed on the network or with a 5xx; default 3. */
  attempts?: number;
  /** 429s in a row one call may wait out before giving up; default 10. */
  maxRateLimitWaits?: number;
  /** Counts a message Slack refused for its content, replaced by a plain fallback (the metrics). */
  onFallback?: (slackError: string) => void;
  metrics?: SlackMetrics;
}

export interface PacedSenderStats {
  calls: number;
  rateLimited: number;
  /** Updates folded into a later update of the same message before they went out. */
  coalesced: number;
}

export interface PacedSender extends AlertSender {
  readonly stats: PacedSenderStats;
  /** Sends what is queued (up to `drainMs`, default 5 s), then fails whatever is left. */
  close(drainMs?: number): Promise<void>;
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

interface Task {
  kind: 'post' | 'update';
  channel: string;
  ts?: string;
  message: AlertMessage & { threadTs?: string };
  waiters: { resolve: (ts: string) => void; reject: (err: unknown) => void }[];
  attempts: number;
  rateLimitWaits: number;
  /** Posts: the idempotency key in the message metadata, and where to look for it (post-once.ts). */
  key?: { postId: string; oldest: string };
}

interface Lane {
  queue: Task[];
  notBefore: number;
  running: boolean;
}

/**
 * The one way alerts reach Slack: per channel, calls go out one at a time and at most one per
 * `intervalMs`; a 429 holds the whole channel for its Retry-After and the call is tried again;
 * several updates of one message waiting in line become one update with the latest content.
 */
export function createPacedSender(options: PacedSenderOptions): PacedSender {
  return new Pacer(options);
}

class Pacer implements PacedSender {
  readonly stats: PacedSenderStats = { calls: 0, rateLimited: 0, coalesced: 0 };
  readonly #client: WebClient;
  readonly #lanes = new Map<string, Lane>();
  readonly #timers = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  readonly #interval: number;
  readonly #attempts: number;
  readonly #maxRateLimitWaits: number;
  readonly #log: Logger;
  readonly #redact: Redactor;
  readonly #onFallback: ((slackError: string) => void) | undefined;
  readonly #metrics: SlackMetrics | undefined;
  #closed = false;

  constructor(options: PacedSenderOptions) {
    const clientOptions: WebClientOptions = {
      slackApiUrl: options.slackApiUrl ?? 'https://slack.com/api/',
      // The pacer waits out 429s itself, so that the whole channel waits, not one call.
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: 15_000,
      logger: quietLogger(options.log),
    };
    this.#client = new WebClient(options.token, clientOptions);
    this.#interval = options.intervalMs ?? 1100;
    this.#attempts = options.attempts ?? 3;
    this.#maxRateLimitWaits = options.maxRateLimitWaits ?? 10;
    this.#log = options.log.child({ component: 'paced-sender' });
    this.#redact = options.redact;
    this.#onFallback = options.onFallback;
    this.#metrics = options.metrics;
  }

  post(channel: string, message: AlertMessage & { threadTs?: string }): Promise<{ ts: string }> {
    return this.#enqueue({ kind: 'post', channel, message }).then((ts) => ({ ts }));
  }

  async update(channel: string, ts: string, message: AlertMessage): Promise<void> {
    const lane = this.#lane(channel);
    const waiting = lane.queue.find((t) => t.kind === 'update' && t.ts === ts);
    if (waiting) {
      waiting.message = message;
      this.stats.coalesced += 1;
      await new Promise<string>((resolve, reject) => waiting.waiters.push({ resolve, reject }));
      return;
    }
    await this.#enqueue({ kind: 'update', channel, ts, message });
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
      for (const task of lane.queue.splice(0)) this.#fail(task, new SlackSendError('the Slack sender was closed before this went out', undefined));
    }
  }

  #enqueue(spec: Pick<Task, 'kind' | 'channel' | 'ts' | 'message'>): Promise<string> {
    if (this.#closed) return Promise.reject(new SlackSendError('the Slack sender is closed', undefined));
    return new Promise<string>((resolve, reject) => {
      const lane = this.#lane(spec.channel);
      lane.queue.push({ ...spec, waiters: [{ resolve, reject }], attempts: 0, rateLimitWaits: 0, ...(spec.kind === 'post' ? { key: newPostKey() } : {}) });
      if (!lane.running) void this.#drain(lane);
    });
  }

  #lane(channel: string): Lane {
    let lane = this.#lanes.get(channel);
    if (!lane) {
      lane = { queue: [], notBefore: 0, running: false };
      this.#lanes.set(channel, lane);
    }
    return lane;
  }

  async #drain(lane: Lane): Promise<void> {
    lane.running = true;
    try {
      while (lane.queue.length) {
        await this.#sleep(lane.notBefore - Date.now());
        const task = lane.queue[0];
        if (!task) break;
        // Taken out of line while in flight: an update arriving now is a new, later update.
        lane.queue.shift();
        const retry = await this.#attempt(task, lane);
        if (retry) lane.queue.unshift(task);
      }
    } finally {
      lane.running = false;
    }
  }

  /** Sends one task; true when it must go back to the front of the line. */
  async #attempt(task: Task, lane: Lane): Promise<boolean> {
    task.attempts += 1;
    this.stats.calls += 1;
    try {
      const ts = await this.#call(task);
      lane.notBefore = Date.now() + this.#interval;
      for (const w of task.waiters) w.resolve(ts);
      return false;
    } catch (err) {
      const code = (err as { code?: string }).code;
      const method = task.kind === 'post' ? 'chat.postMessage' : 'chat.update';
      this.#metrics?.recordSlackError(method, err);
      if (code === ErrorCode.RateLimitedError) {
        this.#metrics?.recordSlackRateLimited(method);
        const asked = Number((err as { retryAfter?: number }).retryAfter);
        const retryAfterSec = Number.isFinite(asked) && asked >= 0 ? asked : 1;
        this.stats.rateLimited += 1;
        task.rateLimitWaits += 1;
        task.attempts -= 1;
        lane.notBefore = Date.now() + retryAfterSec * 1000;
        this.#log.warn({ channel: task.channel, retryAfterSec }, 'Slack rate limit: holding this channel as Retry-After asks');
        if (task.rateLimitWaits <= this.#maxRateLimitWaits && !this.#closed) return true;
        this.#fail(task, new SlackSendError(`Slack kept rate-limiting ${task.channel}`, 'ratelimited', { cause: err }));
        return false;
      }
      const transient = outcomeUnknown(err);
      lane.notBefore = Date.now() + this.#interval * (transient ? task.attempts : 1);
      if (transient && task.kind === 'post' && (await this.#alreadyPosted(task))) return false;
      if (transient && task.attempts < this.#attempts && !this.#closed) return true;
      this.#fail(task, toSendError(err));
      return false;
    }
  }

  async #call(task: Task): Promise<string> {
    const text = this.#redact(task.message.text);
    const blocks = task.message.blocks ? (redactDeep(task.message.blocks, this.#redact) as never[]) : undefined;
    const budget = { log: this.#log, what: `${task.kind} an alert`, onFallback: this.#onFallback };
    const content = (m: OutgoingMessage) => ({ channel: task.channel, text: m.text, ...(m.blocks ? { blocks: m.blocks as never[] } : {}) });
    if (task.kind === 'update') {
      await sendWithFallback((m) => this.#client.chat.update({ ...content(m), ts: task.ts! }), { text, blocks }, budget);
      return task.ts!;
    }
    const thread = task.message.threadTs ? { thread_ts: task.message.threadTs } : {};
    const metadata = task.key ? { metadata: postMetadata(task.key.postId) } : {};
    const result = await sendWithFallback((m) => this.#client.chat.postMessage({ ...content(m), ...metadata, ...thread }), { text, blocks }, budget);
    if (typeof result.ts !== 'string') throw new SlackSendError('Slack accepted the message but returned no ts', undefined);
    return result.ts;
  }

  /**
   * A post whose outcome is unknown is not sent again blindly: the channel is read back for its
   * key. Found: delivered. Unreadable: given up as possibly delivered (never shown twice).
   * True when the task is settled.
   */
  async #alreadyPosted(task: Task): Promise<boolean> {
    if (!task.key) return false;
    const where = { channel: task.channel, ...(task.message.threadTs ? { thread_ts: task.message.threadTs } : {}) };
    const found = await findPosted(this.#client, where, task.key.postId, task.key.oldest, (method, err) => this.#metrics?.recordSlackError(method, err));
    if (found.read && !found.ts) return false;
    if (found.ts) this.#log.warn({ channel: task.channel }, 'Slack failed after storing the message: it is not posted again');
    else this.#log.error({ channel: task.channel }, 'Slack may have stored this message and the channel cannot be read to tell: it is not posted again');
    for (const w of task.waiters) w.resolve(found.ts ?? '');
    return true;
  }

  #fail(task: Task, err: unknown): void {
    this.#log.warn({ channel: task.channel, kind: task.kind, err: (err as Error).message }, 'Slack call failed');
    for (const w of task.waiters) w.reject(err);
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

/** WebClient's own chatter goes to our log at debug; failures are logged by the pacer. */
function quietLogger(log: Logger): SlackLogger {
  const debug = (...msgs: unknown[]) => log.debug({ component: 'slack-web-api' }, msgs.map(String).join(' '));
  return { debug, info: debug, warn: debug, error: debug, setLevel: () => undefined, getLevel: () => LogLevel.DEBUG, setName: () => undefined };
}

function toSendError(err: unknown): SlackSendError {
  if (err instanceof SlackSendError) return err;
  const slackError = (err as { data?: { error?: unknown } }).data?.error;
  const code = typeof slackError === 'string' ? slackError : undefined;
  return new SlackSendError(code ? `Slack refused the call: ${code}` : `Slack could not be reached: ${(err as Error).message}`, code, { cause: err });
}
