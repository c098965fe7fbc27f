import type { RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { CommandReply } from '../../commands/types.ts';
import type { Logger } from '../log.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import { toSlackText } from './mrkdwn.ts';

export interface ReplyDestination {
  respond?: RespondFn;
  client: WebClient;
  channel: string;
  user: string;
}

/**
 * Posts a command's answer: through the response_url (which also works where the bot is not a
 * member), else through the Web API. Ephemeral answers reach only the requester.
 */
export async function deliverReply(reply: CommandReply, to: ReplyDestination, redact: Redactor, log: Logger): Promise<void> {
  const text = toSlackText(redact(reply.text));
  const blocks = reply.blocks ? redactDeep(reply.blocks, redact) : undefined;
  const content = { text, ...(blocks ? { blocks: blocks as never[] } : {}) };
  if (to.respond) {
    try {
      await to.respond({ response_type: reply.visibility, replace_original: false, ...content });
      return;
    } catch (err) {
      log.warn({ channel: to.channel, err: (err as Error).message }, 'response_url failed; answering through the Web API');
    }
  }
  if (reply.visibility === 'in_channel') await to.client.chat.postMessage({ channel: to.channel, ...content });
  else await to.client.chat.postEphemeral({ channel: to.channel, user: to.user, ...content });
}
