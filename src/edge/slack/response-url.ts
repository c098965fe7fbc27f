import type { OutgoingMessage } from './message-budget.ts';

/*
 * A command's or a click's response_url (https://docs.slack.dev/interactivity/handling-user-interaction):
 * up to 5 posts within 30 minutes. The bot answers in a channel with its own messages
 * (chat.postMessage, then chat.update, S-ONE-ANSWER); the response_url carries only what the
 * Web API cannot: an answer to one person (ephemeral), and a command's running note and result
 * in a channel the bot may not post to (a private channel it is not in, S-ONE-ANSWER-PRIVATE).
 * `replace_original` edits the clicked message; a slash command's URL posts a new message
 * whatever it asks (S-RESPONSE-URL-REPLACE), so nothing here edits a command's answer.
 */

export interface ResponseUrlPost {
  visibility: 'ephemeral' | 'in_channel';
  replaceOriginal: boolean;
}

/** How long Slack honours a response_url. */
export const RESPONSE_URL_TTL_MS = 30 * 60_000;

/** The response_url refused the post or did not answer; `slackError` is Slack's reason (`used_url`, `expired_url`, `invalid_blocks`…). */
export class ResponseUrlError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    readonly slackError: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ResponseUrlError';
  }

  /** Slack answered 5xx, or nothing came back after sending: the post may have been shown. */
  get mayHaveArrived(): boolean {
    if (this.statusCode !== undefined) return this.statusCode >= 500;
    const code = String((this.cause as { cause?: { code?: unknown }; code?: unknown } | undefined)?.cause?.code ?? (this.cause as { code?: unknown } | undefined)?.code ?? '');
    return !['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code);
  }

  /** Used up or expired: only a Web API post can still reach the channel. */
  get usedUp(): boolean {
    return this.slackError === 'used_url' || this.slackError === 'expired_url' || this.statusCode === 404 || this.statusCode === 410;
  }
}

export async function postToResponseUrl(url: string, message: OutgoingMessage, how: ResponseUrlPost): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: how.visibility, replace_original: how.replaceOriginal, text: message.text, ...(message.blocks ? { blocks: message.blocks } : {}) }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw new ResponseUrlError(`the response_url could not be reached: ${(err as Error).message}`, undefined, undefined, { cause: err });
  }
  const text = await res.text().catch(() => '');
  if (res.ok) return;
  throw new ResponseUrlError(`the response_url answered HTTP ${res.status}`, res.status, slackErrorIn(text));
}

function slackErrorIn(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : undefined;
  } catch {
    return /^[a-z_]+$/.test(body.trim()) ? body.trim() : undefined;
  }
}
