import { createHash } from 'node:crypto';
import type { KnownBlock } from '@slack/types';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { ReplyTarget } from '../../engine/notifier.ts';
import type { SlackGateway } from './gateway.ts';
import type { OutgoingMessage } from './message-budget.ts';
import { RESPONSE_URL_TTL_MS, ResponseUrlError } from './response-url.ts';

/*
 * One top-level message per command: a check's "running, the result will be posted here" answer
 * is replaced by its result through the command's response_url (`replace_original`), and the
 * details of an `all` run go in that message's thread. The answer carries a block_id derived
 * from the response_url, so the worker can see it has been posted (it is replaced only once it
 * exists) and learn its ts for the thread, by reading the channel back.
 */

/** Room left on a response_url (valid 30 minutes) before the result is posted anew instead. */
const TTL_MARGIN_MS = 60_000;
/** How long the result waits for the "running" answer to show up in the channel. */
const WAIT_FOR_ANSWER_MS = 3_000;
const POLL_MS = 150;

/** The block_id the "running" answer carries: the same for the bot and the worker, and no secret (a hash). */
export function runningMarker(responseUrl: string): string {
  return `maas-running-${createHash('sha256').update(responseUrl).digest('hex').slice(0, 20)}`;
}

/** The "running" answer as blocks carrying its marker. */
export function markedRunningBlocks(text: string, responseUrl: string): KnownBlock[] {
  return [{ type: 'section', block_id: runningMarker(responseUrl), text: { type: 'mrkdwn', text } }];
}

export interface Replaced {
  /** True when the result took the place of the "running" answer. */
  done: boolean;
  /** The replaced message's ts, for the thread. */
  ts?: string;
}

export async function replaceRunningMessage(slack: SlackGateway, target: ReplyTarget, message: OutgoingMessage, log: Logger, now = Date.now()): Promise<Replaced> {
  const where = { channel: target.channel };
  if (!target.responseUrl || !target.replaceRunning) {
    log.debug(where, 'no "running" answer to replace (no response_url): the result is posted as a new message');
    return { done: false };
  }
  if (target.askedAt !== undefined && now - target.askedAt > RESPONSE_URL_TTL_MS - TTL_MARGIN_MS) {
    log.info(where, 'the command is older than its response_url lasts: the result is posted as a new message');
    return { done: false };
  }
  const found = await waitForAnswer(slack, target, log);
  if (found === 'absent' || found === 'unreadable') {
    log.warn(where, `the "running" answer ${found === 'absent' ? 'is not in the channel' : 'could not be read back'}: the result is posted as a new message`);
    return { done: false };
  }
  try {
    await slack.respond(target.responseUrl, message, { visibility: 'in_channel', replaceOriginal: true }, 'replace the running answer with the result');
    return { done: true, ts: found };
  } catch (err) {
    if (err instanceof ResponseUrlError && err.mayHaveArrived) {
      log.error({ ...where, err: describeError(err) }, 'the response_url failed after the result may have arrived: not posted again');
      return { done: true, ts: found };
    }
    const why = err instanceof ResponseUrlError && err.usedUp ? 'the response_url is used up or expired' : `the response_url refused it (${describeError(err)})`;
    log.warn({ ...where, slackError: (err as { slackError?: unknown }).slackError }, `${why}: the result is posted as a new message`);
    return { done: false };
  }
}

/** The ts of the "running" answer once it shows; 'unreadable' when the channel cannot be read back (no channels:history). */
async function waitForAnswer(slack: SlackGateway, target: ReplyTarget, log: Logger): Promise<string | 'absent' | 'unreadable'> {
  const marker = runningMarker(target.responseUrl!);
  const deadline = Date.now() + WAIT_FOR_ANSWER_MS;
  for (;;) {
    try {
      const hit = (await slack.history(target.channel)).find((m) => (m.blocks ?? []).some((b) => b.block_id === marker));
      if (hit?.ts) return hit.ts;
    } catch (err) {
      log.warn({ channel: target.channel, err: describeError(err) }, 'could not read the channel back for the "running" answer');
      return 'unreadable';
    }
    if (Date.now() >= deadline) return 'absent';
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
