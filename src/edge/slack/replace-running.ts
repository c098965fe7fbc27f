import type { Logger } from '../../core/log.ts';
import type { ReplyTarget } from '../../engine/notifier.ts';
import { answerKey } from './answer-board.ts';
import type { SlackGateway } from './gateway.ts';
import { findAnswerTo, readBackFrom } from './post-once.ts';
import { RESPONSE_URL_TTL_MS } from './response-url.ts';

/*
 * One top-level message per command: the bot posts a check's "running, the result will be posted
 * here" answer as its own message, and the result edits that message (chat.update); a slash
 * command's response_url cannot replace what it posted (S-RESPONSE-URL-REPLACE). The answer
 * board (answer-board.ts) says where the answer is, in Redis between processes, so the channel is
 * read back for it only when the board cannot say (Redis away, or the bot did not learn the ts).
 */

/** How long a result waits for the bot to say where its command's running answer is. */
const WAIT_FOR_ANSWER_MS = 10_000;
/** Room left on a response_url (valid 30 minutes) before the result is posted another way. */
const TTL_MARGIN_MS = 60_000;

/** Where a result goes: over the running answer, through the response_url (the bot cannot post there), or anew. */
export type ResultPlace = { kind: 'edit'; ts: string } | { kind: 'response_url'; url: string } | { kind: 'new' };

export interface PlaceOptions {
  now?: () => number;
  /** How long to wait for the bot to say where the answer is; default 10 s. */
  waitMs?: number;
  /** The result goes out as a new message although the running answer may still show: two messages. */
  onSecondMessage?: (reason: string) => void;
}

export async function placeForResult(slack: SlackGateway, target: ReplyTarget, log: Logger, options: PlaceOptions = {}): Promise<ResultPlace> {
  const now = options.now ?? Date.now;
  const where = { channel: target.channel };
  if (!target.responseUrl || !target.replaceRunning) return { kind: 'new' };
  const key = answerKey(target.responseUrl);
  const answer = await slack.answers.awaitRunning(key, options.waitMs ?? WAIT_FOR_ANSWER_MS);
  if (!answer) {
    log.debug(where, 'no running answer to replace: the result is posted as a new message');
    return { kind: 'new' };
  }
  if (answer.at === 'message') return { kind: 'edit', ts: answer.ts };
  if (answer.at === 'unknown') return lookInTheChannel(slack, target, key, log, now, options.onSecondMessage);
  if (target.askedAt !== undefined && now() - target.askedAt > RESPONSE_URL_TTL_MS - TTL_MARGIN_MS) {
    log.warn(where, 'the command is older than its response_url lasts: the result is posted through the Web API');
    return { kind: 'new' };
  }
  return { kind: 'response_url', url: target.responseUrl };
}

/** The board cannot say where the running answer is: its metadata names the command, so the channel can. */
async function lookInTheChannel(slack: SlackGateway, target: ReplyTarget, key: string, log: Logger, now: () => number, onSecondMessage?: (reason: string) => void): Promise<ResultPlace> {
  const where = { channel: target.channel };
  const oldest = readBackFrom(target.askedAt ?? now());
  const found = await findAnswerTo(slack.reader, target.channel, key, oldest);
  if (found.ts) {
    log.info(where, 'where the running answer is was not known: found in the channel, the result replaces it');
    return { kind: 'edit', ts: found.ts };
  }
  if (found.read) {
    log.info(where, 'the running answer is not in the channel: the result is posted as a new message');
    return { kind: 'new' };
  }
  log.warn(where, 'where the running answer is is not known and the channel cannot be read to find it: the result is posted as a new message, and the running answer may still show');
  onSecondMessage?.('running_answer_unknown');
  return { kind: 'new' };
}
