import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/log.ts';
import { withTimeout } from '../../core/with-timeout.ts';

/** Slack's window for x-slack-request-timestamp, now applied both ways. */
export const REQUEST_WINDOW_SEC = 5 * 60;
/** A request is valid from ts-5min to ts+5min: its signature is remembered that long. */
export const REPLAY_MEMORY_SEC = 2 * REQUEST_WINDOW_SEC;
/** Bolt's own limit for a request body. */
const BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Past the limit the rest of the body is read and dropped up to this, or for this long (readBody). */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 10_000;

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export interface SlackRequestGuardOptions {
  signingSecret: string;
  /** Remembers a signature for `ttlSec`; false when it was already remembered (a replay). Throws when it cannot tell. */
  remember: (signature: string, ttlSec: number) => Promise<boolean>;
  log: Logger;
  /** The events path; default /slack/events. */
  path?: string;
  /**
   * How long the replay check may wait for Redis: the ack waits for it, and Slack gives 3 seconds
   * and never retries a command or a click (S-ACK-3S). Default 1 s; past it the check is skipped.
   */
  rememberTimeoutMs?: number;
  now?: () => number;
  /** Called once per request refused here (the metrics): `too_large`, `future_timestamp` or `replay`. */
  onRefused?: (reason: RefusalReason) => void;
}

export type RefusalReason = 'too_large' | 'future_timestamp' | 'replay';

/**
 * In front of Bolt's HTTP receiver, which checks the signature and refuses stale timestamps:
 * this refuses timestamps more than 5 minutes in the future too, and a byte-identical replay of
 * a signed request inside the window (its signature is remembered in Redis). What passes goes on
 * to Bolt with its body already read, and Bolt verifies it as before.
 */
export function guardSlackRequests(listener: Listener, options: SlackRequestGuardOptions): Listener {
  const path = options.path ?? '/slack/events';
  const now = options.now ?? Date.now;
  const log = options.log.child({ component: 'slack-request-guard' });
  return (req, res) => {
    if ((req.method ?? '').toUpperCase() !== 'POST' || new URL(req.url ?? '/', 'http://localhost').pathname !== path) {
      listener(req, res);
      return;
    }
    void readBody(req).then(
      async (body) => {
        Object.assign(req, { rawBody: body });
        const refusal = await refusalOf(req, body);
        if (!refusal) {
          listener(req, res);
          return;
        }
        log.warn({ reason: refusal.reason }, 'refused a Slack request');
        options.onRefused?.(refusal.kind);
        res.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${refusal.reason}\n`);
      },
      (err: unknown) => {
        // The client went away mid-body: nobody to answer.
        if (err !== BODY_TOO_LARGE) return void req.destroy();
        log.warn({ limitBytes: BODY_LIMIT_BYTES }, 'refused a Slack request: body too large');
        options.onRefused?.('too_large');
        res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(`request body larger than ${BODY_LIMIT_BYTES} bytes\n`);
      },
    );
  };

  async function refusalOf(req: IncomingMessage, body: Buffer): Promise<{ status: number; reason: string; kind: RefusalReason } | undefined> {
    const timestamp = Number(req.headers['x-slack-request-timestamp']);
    const signature = req.headers['x-slack-signature'];
    // Unsigned, malformed or stale: Bolt refuses these itself (and answers ssl_check).
    if (!Number.isInteger(timestamp) || typeof signature !== 'string') return undefined;
    if (timestamp - Math.floor(now() / 1000) > REQUEST_WINDOW_SEC) return { status: 401, reason: 'x-slack-request-timestamp is more than 5 minutes in the future', kind: 'future_timestamp' };
    if (!validSignature(options.signingSecret, timestamp, body, signature)) return undefined;
    try {
      if (!(await withTimeout(options.remember(signature, REPLAY_MEMORY_SEC), options.rememberTimeoutMs ?? 1_000))) return { status: 401, reason: 'this signed request was already received (a replay)', kind: 'replay' };
    } catch (err) {
      // Redis is down: nothing can be queued either, so a replay could only get an answer; the user
      // must still hear that the bot cannot take work right now.
      log.warn({ err: (err as Error).message }, 'cannot remember request signatures (Redis unreachable or slow): replay check skipped');
    }
    return undefined;
  }
}

function validSignature(secret: string, timestamp: number, body: Buffer, signature: string): boolean {
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const BODY_TOO_LARGE = new Error('body too large');

/**
 * The body, or a rejection when it passes the limit. The rejection waits for the rest of the body
 * (read and dropped), up to DRAIN_LIMIT_BYTES or DRAIN_MS: a server that stops reading and closes
 * resets the connection mid-upload, and the client never sees the 413.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    const tooLarge = () => {
      clearTimeout(drainTimer);
      reject(BODY_TOO_LARGE);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT_BYTES) chunks.push(chunk);
      else if (drainTimer === undefined) {
        chunks.length = 0;
        drainTimer = setTimeout(tooLarge, DRAIN_MS);
      } else if (size > DRAIN_LIMIT_BYTES) tooLarge();
    });
    req.on('end', () => (drainTimer === undefined ? resolve(Buffer.concat(chunks, size)) : tooLarge()));
    req.on('error', (err) => {
      clearTimeout(drainTimer);
      reject(err);
    });
  });
}
