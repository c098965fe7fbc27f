import { ErrorCode, LogLevel, WebClient, WebClientEvent, type RetryOptions } from '@slack/web-api';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Notifier, ReplyTarget } from '../notifier.ts';
import type { PlanMessageView } from '../repair/plan-view.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import type { Report } from '../report.ts';
import { fitMessage, sendWithFallback, type OutgoingMessage } from './message-budget.ts';
import { toSlackText } from './mrkdwn.ts';
import { renderPlanMessage } from './plan-render.ts';
import { renderSummary, summaryOrder } from './all-summary.ts';
import { attachmentsFor, type FileAttachment } from './evidence-files.ts';
import { uploadTextFile } from './file-upload.ts';
import { renderReports } from './render.ts';
import { noBlindRetries, postOnce } from './post-once.ts';

/** What the Slack transport records: failed calls and 429s. */
export type SlackMetrics = Pick<Metrics, 'recordSlackError' | 'recordSlackRateLimited'>;

export interface SlackNotifierOptions {
  token: string;
  slackApiUrl?: string;
  redact: Redactor;
  log: Logger;
  /** WebClient retries (network errors and 429 after Retry-After); default a few within a minute. */
  retryConfig?: RetryOptions;
  /** Counts a message Slack refused for its content, replaced by a plain fallback (the metrics). */
  onFallback?: (slackError: string) => void;
  metrics?: SlackMetrics;
  /** Least time between two thread replies of one `all` answer; default 1100 ms (Slack: about one message a second per channel). */
  threadIntervalMs?: number;
}

const THREAD_INTERVAL_MS = 1100;

/** A message as chat.postMessage / chat.update take it. */
const body = (m: OutgoingMessage) => ({ text: m.text, ...(m.blocks ? { blocks: m.blocks as never[] } : {}) });

/** Slack answers that no retry will change. */
const PERMANENT = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'invalid_blocks',
  'msg_blocks_too_long',
  'no_text',
  'restricted_action',
]);

/** Posting failed; `slackError` is Slack's code (channel_not_found…) when Slack answered. */
export class SlackDeliveryError extends Error {
  readonly slackError: string | undefined;
  /** False when trying again cannot help (the channel is gone, the token is wrong…). */
  readonly retryable: boolean;

  constructor(message: string, slackError: string | undefined, retryable: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SlackDeliveryError';
    this.slackError = slackError;
    this.retryable = retryable;
  }
}

const DEFAULT_RETRY: RetryOptions = { retries: 5, factor: 2, minTimeout: 1000, maxTimeout: 30_000, randomize: true };

/** Where a channel refuses the bot, the command's response_url (valid 30 minutes) still reaches it. */
const FALL_BACK_TO_RESPONSE_URL = new Set(['channel_not_found', 'not_in_channel']);

export function createSlackNotifier(options: SlackNotifierOptions): Notifier {
  const log = options.log.child({ component: 'slack-notifier' });
  const clientOptions = {
    slackApiUrl: options.slackApiUrl ?? 'https://slack.com/api/',
    timeout: 15_000,
    logger: quietLogger(log),
  };
  // Updates are idempotent and retried; posts never blindly (post-once.ts reads the channel back first).
  const client = new WebClient(options.token, { ...clientOptions, retryConfig: options.retryConfig ?? DEFAULT_RETRY });
  const poster = new WebClient(options.token, { ...clientOptions, retryConfig: noBlindRetries(options.retryConfig ?? DEFAULT_RETRY) });
  for (const c of [client, poster]) {
    c.on(WebClientEvent.RATE_LIMITED, (retryAfterSec: number, request?: { url?: string }) => {
      options.metrics?.recordSlackRateLimited(request?.url ?? 'chat.postMessage');
      log.warn({ retryAfterSec }, 'Slack rate limit: waiting as Retry-After asks');
    });
  }
  const onError = (method: string, err: unknown) => options.metrics?.recordSlackError(method, err);
  const send = { log, onError };

  async function post(target: ReplyTarget, message: { text: string; blocks?: unknown[] }): Promise<string | undefined> {
    const text = options.redact(message.text);
    const blocks = message.blocks ? redactDeep(message.blocks, options.redact) : undefined;
    const content = fitMessage({ text, ...(blocks ? { blocks: blocks as never[] } : {}) });
    try {
      const res = await sendWithFallback((m) => postOnce(poster, { channel: target.channel, ...(target.threadTs ? { thread_ts: target.threadTs } : {}), ...body(m) }, send), content, { log, what: `post to ${target.channel}`, onFallback: options.onFallback });
      return res.ts;
    } catch (err) {
      const slackError = slackErrorCode(err);
      log.error({ channel: target.channel, slackError, err: describeError(err) }, 'could not post to Slack');
      if (slackError && FALL_BACK_TO_RESPONSE_URL.has(slackError) && target.responseUrl) {
        if (await postToResponseUrl(target.responseUrl, content, log)) return undefined;
      }
      throw new SlackDeliveryError(
        `Slack refused the message for ${target.channel}${slackError ? ` (${slackError})` : ''}`,
        slackError,
        !(slackError && PERMANENT.has(slackError)),
        err,
      );
    }
  }

  /** Files and thread replies after the message reached Slack: a failure is logged, the message stands. */
  async function inThread(where: ReplyTarget, what: string, send: () => Promise<unknown>): Promise<void> {
    try {
      await send();
    } catch (err) {
      log.error({ channel: where.channel, slackError: slackErrorCode(err), err: describeError(err) }, `could not ${what}`);
    }
  }

  async function upload(where: ReplyTarget, threadTs: string, files: readonly FileAttachment[]): Promise<void> {
    for (const file of files) {
      const clean = { ...file, title: options.redact(file.title), content: options.redact(file.content) };
      await inThread(where, `upload ${file.filename}`, () => uploadTextFile(client, { channel: where.channel, threadTs }, clean));
    }
  }

  const pace = () => new Promise((resolve) => setTimeout(resolve, options.threadIntervalMs ?? THREAD_INTERVAL_MS));

  /** One target: its message, its long lists as files in its thread. Several: a summary, then each failing target in the thread. */
  async function postReports(target: ReplyTarget, reports: Report[]): Promise<void> {
    if (reports.length <= 1) {
      const ts = await post(target, renderReports(reports));
      const thread = target.threadTs ?? ts;
      if (thread) await upload(target, thread, reports.flatMap(attachmentsFor));
      return;
    }
    const summary = renderSummary(reports);
    const ts = await post(target, summary.message);
    const thread = target.threadTs ?? ts;
    // Answered through the response_url (the bot is not in the channel): no thread to post in.
    if (!thread) return;
    if (summary.file) await upload(target, thread, [summary.file]);
    const where = { channel: target.channel, threadTs: thread };
    for (const report of summaryOrder(reports).filter((r) => r.status !== 'ok')) {
      await pace();
      await inThread(where, `post the details of ${report.target}`, () => post(where, renderReports([report])));
      await upload(where, thread, attachmentsFor(report));
    }
  }

  return {
    // Redacted before rendering too: clipping could cut a secret short of what the redactor recognises.
    postReports: (target, reports: Report[]) => postReports(target, redactDeep(reports, options.redact)),
    postError: async (target, message) => {
      await post(target, { text: `:x: ${toSlackText(options.redact(message))}` });
    },
    ...planMessages({ client, poster }, options.redact, log, { onError, ...(options.onFallback ? { onFallback: options.onFallback } : {}) }),
  };
}

/** Repairs: the plan message with its buttons, its updates and its thread (src/slack/plan-render.ts). */
function planMessages(
  clients: { client: WebClient; poster: WebClient },
  redact: Redactor,
  log: Logger,
  hooks: { onError: (method: string, err: unknown) => void; onFallback?: (slackError: string) => void },
): Required<Pick<Notifier, 'postPlan' | 'updatePlan' | 'postInThread'>> {
  const { client, poster } = clients;
  const content = (view: PlanMessageView): OutgoingMessage => {
    const { text, blocks } = renderPlanMessage(redactDeep(view, redact));
    return { text: redact(text), blocks: redactDeep(blocks, redact) as never[] };
  };
  const within = <T>(what: string, sendOne: (m: OutgoingMessage) => Promise<T>, message: OutgoingMessage) => sendWithFallback(sendOne, message, { log, what, onFallback: hooks.onFallback });
  const failed = (what: string, channel: string, method?: string) => (err: unknown) => {
    if (method) hooks.onError(method, err);
    const slackError = slackErrorCode(err);
    log.error({ channel, slackError, err: describeError(err) }, `could not ${what}`);
    throw new SlackDeliveryError(`Slack refused to ${what} in ${channel}${slackError ? ` (${slackError})` : ''}`, slackError, !(slackError && PERMANENT.has(slackError)), err);
  };
  const send = { log, onError: hooks.onError };
  return {
    postPlan: async (target, view) => {
      const res = await within('post a plan', (m) => postOnce(poster, { channel: target.channel, ...body(m) }, send), content(view)).catch(failed('post a plan', target.channel));
      return { channel: res.channel, ts: res.ts ?? '' };
    },
    updatePlan: async (ref, view) => {
      await within('update a plan', (m) => client.chat.update({ channel: ref.channel, ts: ref.ts, ...body(m) }), content(view)).catch(failed('update a plan', ref.channel, 'chat.update'));
    },
    postInThread: async (ref, text) => {
      await within('post in a plan thread', (m) => postOnce(poster, { channel: ref.channel, thread_ts: ref.ts, ...body(m) }, send), { text: toSlackText(redact(text)) }).catch(
        failed('post in a plan thread', ref.channel),
      );
    },
  };
}

async function postToResponseUrl(url: string, content: { text: string; blocks?: unknown[] }, log: Logger): Promise<boolean> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'in_channel', replace_original: false, ...content }),
      signal: AbortSignal.timeout(15_000),
    });
    if (res.ok) return true;
    log.error({ status: res.status }, 'the response_url refused the message too');
  } catch (err) {
    log.error({ err: describeError(err) }, 'the response_url could not be reached');
  }
  return false;
}

function slackErrorCode(err: unknown): string | undefined {
  const e = err as { code?: string; data?: { error?: unknown } };
  if (e.code === ErrorCode.PlatformError && typeof e.data?.error === 'string') return e.data.error;
  if (e.code === ErrorCode.RateLimitedError) return 'ratelimited';
  return undefined;
}

/** WebClient's own logging, through ours at debug level (its warnings repeat what we log). */
function quietLogger(log: Logger) {
  const line = (msg: unknown[]) => msg.map(String).join(' ');
  return {
    debug: (...msg: unknown[]) => log.debug(line(msg)),
    info: (...msg: unknown[]) => log.debug(line(msg)),
    warn: (...msg: unknown[]) => log.debug(line(msg)),
    error: (...msg: unknown[]) => log.debug(line(msg)),
    setLevel: () => undefined,
    getLevel: () => (log.isLevelEnabled('debug') ? LogLevel.DEBUG : LogLevel.INFO),
    setName: () => undefined,
  };
}
