import type { RespondFn } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { CommandReply } from '../command-types.ts';
import type { Logger } from '../log.ts';
import { redactDeep, type Redactor } from '../redact.ts';
import { sendWithFallback, type OutgoingMessage } from './message-budget.ts';
import { toSlackText } from './mrkdwn.ts';
import { postOnce } from './post-once.ts';

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
      if (mayHaveArrived(err)) {
        log.error({ channel: to.channel, err: (err as Error).message }, 'response_url failed after the answer may have arrived: not sent again');
        return;
      }
      log.warn({ channel: to.channel, err: (err as Error).message }, 'response_url failed; answering through the Web API');
    }
  }
  if (reply.visibility === 'in_channel') await sendWithFallback((m) => postOnce(to.client, { channel: to.channel, ...body(m) }, { log }), content, { ...budget, what: 'answer a command' });
  else await sendWithFallback((m) => to.client.chat.postEphemeral({ channel: to.channel, user: to.user, ...body(m) }), content, { ...budget, what: 'answer a command' });
}

/** A response_url answer of 5xx, or no answer after sending: it may have been shown; a 4xx or a refused connection was not. */
function mayHaveArrived(err: unknown): boolean {
  // Bolt's RespondError carries statusCode; a fetch failure (no answer) carries its cause's code.
  const e = err as { statusCode?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  const status = Number(e?.statusCode);
  if (Number.isInteger(status) && status > 0) return status >= 500;
  return !['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(String(e?.cause?.code ?? e?.code ?? ''));
}
