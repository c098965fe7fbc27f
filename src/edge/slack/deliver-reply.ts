import type { Logger } from '../../core/log.ts';
import type { CommandReply } from './command-contract.ts';
import type { SlackGateway } from './gateway.ts';
import type { OutgoingMessage } from './message-budget.ts';
import { toSlackText } from './mrkdwn.ts';
import { markedRunningBlocks } from './replace-running.ts';
import { ResponseUrlError } from './response-url.ts';

export interface ReplyDestination {
  channel: string;
  user: string;
  responseUrl?: string | undefined;
}

/**
 * Posts a command's answer: through the response_url (which also works where the bot is not a
 * member), else through the Web API. Ephemeral answers reach only the requester.
 */
export async function deliverReply(reply: CommandReply, to: ReplyDestination, slack: SlackGateway, log: Logger): Promise<void> {
  const text = toSlackText(reply.text);
  // An answer its result will replace carries a marker the worker finds it by (replace-running.ts).
  const blocks = reply.blocks ?? (reply.replacedByResult && to.responseUrl ? markedRunningBlocks(text, to.responseUrl) : undefined);
  const content: OutgoingMessage = { text, ...(blocks ? { blocks } : {}) };
  if (to.responseUrl) {
    try {
      await slack.respond(to.responseUrl, content, { visibility: reply.visibility, replaceOriginal: false });
      return;
    } catch (err) {
      if (err instanceof ResponseUrlError && err.mayHaveArrived) {
        log.error({ channel: to.channel, err: err.message }, 'response_url failed after the answer may have arrived: not sent again');
        return;
      }
      log.warn({ channel: to.channel, err: (err as Error).message }, 'response_url failed; answering through the Web API');
    }
  }
  if (reply.visibility === 'in_channel') await slack.post(to.channel, content, { what: 'answer a command', paced: false });
  else await slack.postEphemeral(to.channel, to.user, content, { what: 'answer a command', paced: false });
}
