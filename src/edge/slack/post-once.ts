import { randomUUID } from 'node:crypto';
import type { KnownBlock } from '@slack/types';
import { ErrorCode, type RetryOptions, type WebClient } from '@slack/web-api';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';

/*
 * chat.postMessage is not idempotent: when Slack answers 500, `internal_error` or `fatal_error`
 * ("some aspect of the operation succeeded"), or the connection drops, after it stored the
 * message, posting again shows the message twice. So a post carries an idempotency key in its
 * message metadata, and before it is sent again the channel (or the thread) is read back with
 * conversations.history / conversations.replies, a few pages of at most 15 messages since just
 * before the post (a non-Marketplace app gets no more, S-HISTORY-NON-MARKETPLACE): a message
 * carrying the key means it was delivered. When the channel cannot be read to the end of that
 * window (no channels:history scope, not a member, a 429, more pages than the window allows),
 * the post is not repeated: a message possibly lost is better than one shown twice.
 */

export const POST_EVENT_TYPE = 'maas_chatops_post';

/** Slack's answers that say the call may have been carried out in part (S-INTERNAL-ERROR). */
const MAYBE_DONE = new Set(['internal_error', 'fatal_error']);

/** A Slack failure that leaves unknown whether the call was carried out: a 5xx, internal_error, a timeout, a dropped connection. */
export function outcomeUnknown(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown; data?: { error?: unknown } } | null;
  if (e?.code === ErrorCode.HTTPError) return Number(e.statusCode) >= 500;
  if (e?.code === ErrorCode.PlatformError) return MAYBE_DONE.has(String(e.data?.error));
  return e?.code === ErrorCode.RequestError && !waitedOutRateLimit(err) && !neverSent(err);
}

/** Socket errors raised before a request is written: the connection was refused, the name did not resolve, TLS failed. */
const BEFORE_SENDING = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID']);

/**
 * The request never left this process (fetch's `cause` names a connect-phase error): Slack stored
 * nothing, so the call is simply a failure, retried by the SDK's backoff like any other and never
 * reported as possibly posted.
 */
export function neverSent(err: unknown): boolean {
  const code = (err as { original?: { cause?: { code?: unknown } } } | null)?.original?.cause?.code;
  return typeof code === 'string' && BEFORE_SENDING.has(code);
}

/**
 * The WebClient signals "429 waited out, send again" to its retry loop as a request error
 * wrapping this message: Slack refused the call, nothing was carried out.
 */
function waitedOutRateLimit(err: unknown): boolean {
  const original = (err as { original?: { message?: unknown } } | null)?.original;
  return typeof original?.message === 'string' && original.message.startsWith('A rate limit was exceeded');
}

/**
 * A WebClient retry policy that still waits out 429s (Slack refused the call; nothing happened)
 * but never repeats a call whose outcome is unknown: that is postOnce's decision, not a blind retry.
 */
export function noBlindRetries(base: RetryOptions): RetryOptions {
  const onFailedAttempt = (err: unknown) => {
    if (outcomeUnknown(err)) throw err;
  };
  return { ...base, onFailedAttempt } as RetryOptions;
}

export interface PostContent {
  channel: string;
  text: string;
  thread_ts?: string;
  blocks?: KnownBlock[];
}

export interface PostOnceOptions {
  log: Logger;
  /** Reads the channel back; a client that rejects a 429 at once (see gateway.ts) keeps a read from stalling posts. Default `client`. */
  reader?: WebClient;
  /** The command this message answers (answer-board.ts answerKey), carried in its metadata. */
  answerTo?: string;
  /** The command whose result this message is, posted anew (not over its running answer). */
  resultOf?: string;
  /** Sends at most this many times (each after the channel showed the message absent). Default 3. */
  attempts?: number;
  /** Wait before sending again: this times the attempt number. Default 1000 ms. */
  backoffMs?: number;
  /** Called for every failed call, with the method name (for the Slack error metric). */
  onError?: (method: string, err: unknown) => void;
}

/** `ts` is absent when Slack may have stored the message but the channel could not be read to tell. */
export interface PostOnceResult {
  channel: string;
  ts?: string;
  /** Sends made (1 unless Slack failed with the message absent). */
  sends: number;
}

/** A new idempotency key and the `oldest` bound for reading it back. */
export function newPostKey(now = Date.now()): { postId: string; oldest: string } {
  return { postId: randomUUID(), oldest: readBackFrom(now) };
}

/** Where a read-back of the bot's own posts starts: a minute before `at` (ms), in Slack's seconds (`oldest`). */
export function readBackFrom(at: number): string {
  return String(Math.floor(at / 1000) - 60);
}

export function postMetadata(postId: string, answerTo?: string, resultOf?: string) {
  return { event_type: POST_EVENT_TYPE, event_payload: { post_id: postId, ...(answerTo ? { answer_to: answerTo } : {}), ...(resultOf ? { result_of: resultOf } : {}) } };
}

export async function postOnce(client: WebClient, content: PostContent, options: PostOnceOptions): Promise<PostOnceResult> {
  const attempts = options.attempts ?? 3;
  const { postId, oldest } = newPostKey();
  for (let sends = 1; ; sends++) {
    try {
      const res = await client.chat.postMessage({ ...content, metadata: postMetadata(postId, options.answerTo, options.resultOf) });
      return { channel: res.channel ?? content.channel, ...(res.ts ? { ts: res.ts } : {}), sends };
    } catch (err) {
      options.onError?.('chat.postMessage', err);
      if (!outcomeUnknown(err)) throw err;
      const found = await findPosted(options.reader ?? client, content, postId, oldest, options.onError);
      if (found.read && found.ts) {
        options.log.warn({ channel: content.channel, sends }, 'Slack failed after storing the message: it is not posted again');
        return { channel: content.channel, ts: found.ts, sends };
      }
      if (!found.read) {
        options.log.error({ channel: content.channel, err: describeError(err) }, 'Slack may have stored this message and the channel cannot be read to tell: it is not posted again');
        return { channel: content.channel, sends };
      }
      if (sends >= attempts) throw err;
      await new Promise((r) => setTimeout(r, (options.backoffMs ?? 1000) * sends));
    }
  }
}

/** The most a read-back call asks for: all a non-Marketplace app gets (S-HISTORY-NON-MARKETPLACE). */
export const READ_BACK_LIMIT = 15;
/** Pages read before giving up: the window since the post is short, a busy channel is not read to its start. */
export const READ_BACK_PAGES = 3;

/**
 * Reads the channel (or the thread) back for a message carrying `postId`, page by page while
 * Slack says there is more (S-HISTORY-PAGES). `read` is false when the window could not be read
 * to its end: an error, or more pages than READ_BACK_PAGES.
 */
export function findPosted(
  client: WebClient,
  where: { channel: string; thread_ts?: string },
  postId: string,
  oldest: string,
  onError?: (method: string, err: unknown) => void,
): Promise<{ read: boolean; ts?: string }> {
  return findTagged(client, where, (payload) => payload.post_id === postId, oldest, onError);
}

/** The running answer of a command (answer-board.ts answerKey) among the bot's messages since `oldest`, read back like findPosted. */
export function findAnswerTo(client: WebClient, channel: string, answerTo: string, oldest: string, onError?: (method: string, err: unknown) => void): Promise<{ read: boolean; ts?: string }> {
  return findTagged(client, { channel }, (payload) => payload.answer_to === answerTo, oldest, onError);
}

/** The result of a command (answer-board.ts answerKey) posted anew since `oldest`, read back like findPosted. */
export function findResultOf(client: WebClient, channel: string, resultOf: string, oldest: string, onError?: (method: string, err: unknown) => void): Promise<{ read: boolean; ts?: string }> {
  return findTagged(client, { channel }, (payload) => payload.result_of === resultOf, oldest, onError);
}

type PostPayload = { post_id?: unknown; answer_to?: unknown; result_of?: unknown };

async function findTagged(
  client: WebClient,
  where: { channel: string; thread_ts?: string },
  matches: (payload: PostPayload) => boolean,
  oldest: string,
  onError?: (method: string, err: unknown) => void,
): Promise<{ read: boolean; ts?: string }> {
  const method = where.thread_ts ? 'conversations.replies' : 'conversations.history';
  let cursor: string | undefined;
  try {
    for (let page = 0; page < READ_BACK_PAGES; page++) {
      const common = { channel: where.channel, oldest, include_all_metadata: true, limit: READ_BACK_LIMIT, ...(cursor ? { cursor } : {}) };
      const res = where.thread_ts ? await client.conversations.replies({ ...common, ts: where.thread_ts }) : await client.conversations.history({ ...common, inclusive: true });
      const hit = (res.messages ?? []).find((m) => {
        const metadata = (m as { metadata?: { event_type?: unknown; event_payload?: PostPayload } }).metadata;
        return metadata?.event_type === POST_EVENT_TYPE && metadata.event_payload !== undefined && matches(metadata.event_payload);
      });
      if (hit?.ts) return { read: true, ts: hit.ts };
      cursor = res.has_more ? res.response_metadata?.next_cursor || undefined : undefined;
      if (!cursor) return res.has_more ? { read: false } : { read: true };
    }
    return { read: false };
  } catch (err) {
    onError?.(method, err);
    return { read: false };
  }
}
