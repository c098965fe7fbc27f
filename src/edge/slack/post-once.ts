import { randomUUID } from 'node:crypto';
import type { KnownBlock } from '@slack/types';
import { ErrorCode, type RetryOptions, type WebClient } from '@slack/web-api';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';

/*
 * chat.postMessage is not idempotent: when Slack answers 500, or the connection drops, after it
 * stored the message, posting again shows the message twice. So a post carries an idempotency key
 * in its message metadata, and before it is sent again the channel (or the thread) is read back
 * with conversations.history / conversations.replies: a message carrying the key means it was
 * delivered. When the channel cannot be read (no channels:history scope, Slack down), the post is
 * not repeated: a message possibly lost is better than one shown twice.
 */

export const POST_EVENT_TYPE = 'maas_chatops_post';

/** A Slack failure that leaves unknown whether the call was carried out: a 5xx, a timeout, a dropped connection. */
export function outcomeUnknown(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (e?.code === ErrorCode.HTTPError) return Number(e.statusCode) >= 500;
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
  return { postId: randomUUID(), oldest: String(Math.floor(now / 1000) - 60) };
}

export function postMetadata(postId: string) {
  return { event_type: POST_EVENT_TYPE, event_payload: { post_id: postId } };
}

export async function postOnce(client: WebClient, content: PostContent, options: PostOnceOptions): Promise<PostOnceResult> {
  const attempts = options.attempts ?? 3;
  const { postId, oldest } = newPostKey();
  for (let sends = 1; ; sends++) {
    try {
      const res = await client.chat.postMessage({ ...content, metadata: postMetadata(postId) });
      return { channel: res.channel ?? content.channel, ...(res.ts ? { ts: res.ts } : {}), sends };
    } catch (err) {
      options.onError?.('chat.postMessage', err);
      if (!outcomeUnknown(err)) throw err;
      const found = await findPosted(client, content, postId, oldest, options.onError);
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

/** Reads the channel (or the thread) back for a message carrying `postId`. */
export async function findPosted(
  client: WebClient,
  where: { channel: string; thread_ts?: string },
  postId: string,
  oldest: string,
  onError?: (method: string, err: unknown) => void,
): Promise<{ read: boolean; ts?: string }> {
  const method = where.thread_ts ? 'conversations.replies' : 'conversations.history';
  try {
    const res = where.thread_ts
      ? await client.conversations.replies({ channel: where.channel, ts: where.thread_ts, oldest, include_all_metadata: true, limit: 200 })
      : await client.conversations.history({ channel: where.channel, oldest, inclusive: true, include_all_metadata: true, limit: 200 });
    const hit = (res.messages ?? []).find((m) => (m as { metadata?: { event_payload?: { post_id?: unknown } } }).metadata?.event_payload?.post_id === postId);
    return hit?.ts ? { read: true, ts: hit.ts } : { read: true };
  } catch (err) {
    onError?.(method, err);
    return { read: false };
  }
}
