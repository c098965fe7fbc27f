import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { answerKey } from './answer-board.ts';
import type { CommandReply } from './command-contract.ts';
import type { SlackGateway } from './gateway.ts';
import { slackErrorOf, type OutgoingMessage } from './message-budget.ts';
import { findResultOf, readBackFrom } from './post-once.ts';
import { toSlackText } from './mrkdwn.ts';
import { ResponseUrlError } from './response-url.ts';

export interface ReplyDestination {
  channel: string;
  user: string;
  responseUrl?: string | undefined;
}

/** Where the bot cannot post, only the command's response_url still reaches the channel (S-POST-PRIVATE). */
export const CANNOT_POST = new Set(['channel_not_found', 'not_in_channel']);

/**
 * Posts a command's answer. One seen by the channel is the bot's own message (chat.postMessage),
 * which the result can later edit (chat.update): a slash command's response_url cannot replace
 * what it posted (S-RESPONSE-URL-REPLACE). Only where the bot cannot post (a private channel it
 * is not in) does the answer go through the response_url: the result will follow there, so the
 * "running" note is shown to the requester alone. Ephemeral answers go through the response_url
 * (chat.postEphemeral where there is none).
 */
export async function deliverReply(reply: CommandReply, to: ReplyDestination, slack: SlackGateway, log: Logger): Promise<void> {
  const text = toSlackText(reply.text);
  const content: OutgoingMessage = { text, ...(reply.blocks ? { blocks: reply.blocks } : {}) };
  if (reply.visibility === 'ephemeral') return answerPrivately(content, to, slack, log);
  // Tagged with its command (the metadata names it), whether or not a result will replace it.
  const tag = to.responseUrl ? answerKey(to.responseUrl) : undefined;
  const key = reply.replacedByResult ? tag : undefined;
  if (key && !(await mayPostRunning(key, to, slack, log))) {
    log.info({ channel: to.channel }, 'the result came before the running answer: no running answer is posted');
    return;
  }
  let ts: string;
  try {
    ({ ts } = await slack.post(to.channel, content, { what: 'answer a command', paced: false, ...(tag ? { answerTo: tag } : {}) }));
  } catch (err) {
    const slackError = slackErrorOf(err);
    if (!to.responseUrl || !slackError || !CANNOT_POST.has(slackError)) {
      // No running answer to wait for: the result is posted as soon as it comes.
      if (key) await slack.answers.settleRunning(key, { at: 'unknown' });
      throw err;
    }
    log.info({ channel: to.channel, slackError }, 'the bot cannot post in this channel: answering through the response_url');
    // The result follows through the same URL; the running note is for the requester alone.
    if (key) await slack.answers.settleRunning(key, { at: 'response_url' });
    await slack.respond(to.responseUrl, content, { visibility: key ? 'ephemeral' : 'in_channel', replaceOriginal: false });
    return;
  }
  if (!key) return;
  if (await slack.answers.settleRunning(key, ts ? { at: 'message', ts } : { at: 'unknown' })) return;
  // The result gave up waiting and posted itself meanwhile: this answer would be a second message.
  if (ts) await slack.remove(to.channel, ts).catch((err: unknown) => log.warn({ channel: to.channel, err: describeError(err) }, 'could not take down a running answer the result overtook'));
}

/**
 * Whether the running answer is still to be posted: the board says the result has not come. When
 * Redis cannot say, a result already posted anew is in the channel, named by its metadata.
 */
async function mayPostRunning(key: string, to: ReplyDestination, slack: SlackGateway, log: Logger): Promise<boolean> {
  const claimed = await slack.answers.claimRunning(key);
  if (claimed !== undefined) return claimed;
  const found = await findResultOf(slack.reader, to.channel, key, readBackFrom(Date.now()));
  if (found.ts) return false;
  log.info({ channel: to.channel, channelRead: found.read }, 'Redis cannot say whether the result came first, and the channel does not show it: the running answer is posted');
  return true;
}

async function answerPrivately(content: OutgoingMessage, to: ReplyDestination, slack: SlackGateway, log: Logger): Promise<void> {
  if (to.responseUrl) {
    try {
      await slack.respond(to.responseUrl, content, { visibility: 'ephemeral', replaceOriginal: false });
      return;
    } catch (err) {
      if (err instanceof ResponseUrlError && err.mayHaveArrived) {
        log.error({ channel: to.channel, err: err.message }, 'response_url failed after the answer may have arrived: not sent again');
        return;
      }
      log.warn({ channel: to.channel, err: (err as Error).message }, 'response_url failed; answering through the Web API');
    }
  }
  await slack.postEphemeral(to.channel, to.user, content, { what: 'answer a command', paced: false });
}
