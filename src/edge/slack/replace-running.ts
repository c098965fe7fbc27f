import type { Logger } from '../../core/log.ts';
import type { ReplyTarget } from '../../engine/notifier.ts';
import { answerKey } from './answer-board.ts';
import type { SlackGateway } from './gateway.ts';
import { RESPONSE_URL_TTL_MS } from './response-url.ts';

/*
 * One top-level message per command: the bot posts a check's "running, the result will be posted
 * here" answer as its own message, and the result edits that message (chat.update); a slash
 * command's response_url cannot replace what it posted (S-RESPONSE-URL-REPLACE). The answer
 * board (answer-board.ts) says where the answer is, in Redis between processes, so nothing reads
 * the channel back for it.
 */

/** How long a result waits for the bot to say where its command's running answer is. */
const WAIT_FOR_ANSWER_MS = 10_000;
/** Room left on a response_url (valid 30 minutes) before the result is posted another way. */
const TTL_MARGIN_MS = 60_000;

/** Where a result goes: over the running answer, through the response_url (the bot cannot post there), or anew. */
export type ResultPlace = { kind: 'edit'; ts: string } | { kind: 'response_url'; url: string } | { kind: 'new' };

export async function placeForResult(slack: SlackGateway, target: ReplyTarget, log: Logger, now = Date.now): Promise<ResultPlace> {
  const where = { channel: target.channel };
  if (!target.responseUrl || !target.replaceRunning) return { kind: 'new' };
  const answer = await slack.answers.awaitRunning(answerKey(target.responseUrl), WAIT_FOR_ANSWER_MS);
  if (!answer) {
    log.debug(where, 'no running answer to replace: the result is posted as a new message');
    return { kind: 'new' };
  }
  if (answer.at === 'message') return { kind: 'edit', ts: answer.ts };
  if (answer.at === 'unknown') {
    log.warn(where, 'where the running answer went is unknown: the result is posted as a new message');
    return { kind: 'new' };
  }
  if (target.askedAt !== undefined && now() - target.askedAt > RESPONSE_URL_TTL_MS - TTL_MARGIN_MS) {
    log.warn(where, 'the command is older than its response_url lasts: the result is posted through the Web API');
    return { kind: 'new' };
  }
  return { kind: 'response_url', url: target.responseUrl };
}
