import type { RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { CommandReply } from '../../commands/types.ts';
import type { Logger } from '../log.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import { sendWithFallback, type OutgoingMessage } from './message-budget.ts';
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
export async function deliverReply(reply: CommandReply, to: ReplyDestination, redact: Redactor, log: Logger, onFallback?: (slackError: string) => void): Promise<void> {
  const text = toSlackText(redact(reply.text));
  const blocks = reply.blocks ? redactDeep(reply.blocks, redact) : undefined;
  const content: OutgoingMessage = { text, ...(blocks ? { blocks } : {}) };
  const body = (m: OutgoingMessage) => ({ text: m.text, ...(m.blocks ? { blocks: m.blocks as never[] } : {}) });
  const budget = { log, onFallback };
  if (to.respond) {
    const respond = to.respond;
    try {
      await sendWithFallback((m) => respond({ response_type: reply.visibility, replace_original: false, ...body(m) }), content, { ...budget, what: 'answer through the response_url' });
      return;
    } catch (err) {
      log.warn({ channel: to.channel, err: (err as Error).message }, 'response_url failed; answering through the Web API');
    }
  }
  if (reply.visibility === 'in_channel') await sendWithFallback((m) => to.client.chat.postMessage({ channel: to.channel, ...body(m) }), content, { ...budget, what: 'answer a command' });
  else await sendWithFallback((m) => to.client.chat.postEphemeral({ channel: to.channel, user: to.user, ...body(m) }), content, { ...budget, what: 'answer a command' });
}
