import type { ActionsBlock, ContextBlock, KnownBlock, PlainTextElement, SectionBlock, TextObject } from '@slack/types';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { blocksTextLength, checkMessage, SLACK_MESSAGE_LIMITS, type MessageProblem } from './message-limits.ts';
import { clipText } from './mrkdwn.ts';

/**
 * The message budget: every payload the bot sends (check results, plans, progress, alerts,
 * command answers, response_url replies) passes `fitMessage` before it leaves, so what Slack
 * gets is within the limits of message-limits.ts whatever the renderer built. Renderers aim
 * lower and say what they left out; this is the guarantee behind them.
 */

export interface OutgoingMessage {
  text: string;
  blocks?: KnownBlock[] | undefined;
}

/** Block text kept under Slack's aggregate limit (12,000, counted as message-limits.ts counts) with room to spare. */
export const BUDGET_BLOCK_TEXT = 11_000;

const L = SLACK_MESSAGE_LIMITS;

/** The message cut to Slack's limits: texts clipped, blocks beyond the budget counted in a note. */
export function fitMessage<M extends OutgoingMessage>(message: M): M {
  const text = clipText(message.text || ' ', L.messageText);
  if (!message.blocks) return { ...message, text };
  const blocks = fitBlocks(message.blocks.map(fitBlock));
  return { ...message, text, blocks };
}

/** Slack's answers that mean the content, not the moment, was wrong: trying again as is cannot help. */
const CONTENT_ERRORS = new Set<string>(['invalid_blocks', 'invalid_blocks_format', 'msg_blocks_too_long', 'msg_too_long', 'invalid_attachments']);

export function isContentError(slackError: string | undefined): boolean {
  return slackError !== undefined && CONTENT_ERRORS.has(slackError);
}

/** The short plain text posted when Slack refused the full message. */
export function plainFallback(message: OutgoingMessage, slackError: string): OutgoingMessage {
  const first = (message.text || '').split('\n')[0] ?? '';
  const note = `(Slack refused the full message: ${slackError}. The CLI with --json has all of it.)`;
  return { text: `${clipText(first, 1500)} ${note}`.trim() };
}

export interface FallbackOptions {
  log: Logger;
  /** What was being sent, for the log: `post a check result`. */
  what: string;
  /** Counts the fallback (the metrics). */
  onFallback?: ((slackError: string) => void) | undefined;
}

/**
 * Sends the fitted message; when Slack still refuses its content, sends a short plain fallback
 * once, logs it and counts it. Other failures (the network, a missing channel) propagate.
 */
export async function sendWithFallback<T>(
  send: (message: OutgoingMessage) => Promise<T>,
  message: OutgoingMessage,
  options: FallbackOptions,
): Promise<T> {
  const fitted = fitMessage(message);
  try {
    return await send(fitted);
  } catch (err) {
    const slackError = slackErrorOf(err);
    if (!isContentError(slackError)) throw err;
    options.log.error({ slackError, err: describeError(err), blocks: fitted.blocks?.length ?? 0, chars: fitted.text.length }, `Slack refused the message (${options.what}); posting a plain fallback`);
    options.onFallback?.(slackError!);
    return send(plainFallback(fitted, slackError!));
  }
}

/** Slack's error code from a WebClient error, our own delivery errors, or a response_url answer. */
export function slackErrorOf(err: unknown): string | undefined {
  const e = err as { slackError?: unknown; data?: { error?: unknown } } | null;
  if (typeof e?.slackError === 'string') return e.slackError;
  if (typeof e?.data?.error === 'string') return e.data.error;
  const match = /\b(invalid_blocks|invalid_blocks_format|msg_blocks_too_long|msg_too_long)\b/.exec(String((err as Error | undefined)?.message ?? ''));
  return match?.[1];
}

/** Why Slack would refuse this message as it stands (undefined: it would take it). */
export function budgetProblem(message: OutgoingMessage): MessageProblem | undefined {
  return checkMessage(message);
}

function fitBlock(block: KnownBlock): KnownBlock {
  switch (block.type) {
    case 'header':
      return { ...block, text: fitPlain(block.text, L.headerText) };
    case 'section':
      return fitSection(block);
    case 'context': {
      const elements = block.elements.slice(0, L.contextElements).map((e) => (e.type === 'image' ? e : fitText(e, L.contextElementText)));
      return { ...block, elements: elements.length ? elements : [{ type: 'mrkdwn', text: '…' }] };
    }
    case 'actions':
      return { ...block, elements: block.elements.slice(0, L.actionsElements).map((e) => (e.type === 'button' ? { ...e, text: fitPlain(e.text, L.buttonText) } : e)) };
    default:
      return block;
  }
}

function fitSection(block: SectionBlock): SectionBlock {
  const out: SectionBlock = { ...block };
  if (block.text !== undefined) out.text = fitText(block.text, L.sectionText);
  if (block.fields) out.fields = block.fields.slice(0, L.fields).map((f) => fitText(f, L.fieldText));
  if (out.text === undefined && !out.fields?.length) out.text = { type: 'mrkdwn', text: '…' };
  return out;
}

function fitText(text: TextObject, max: number): TextObject {
  const clipped = clipText(text.text, max);
  return { ...text, text: clipped.length ? clipped : '…' };
}

function fitPlain(text: PlainTextElement, max: number): PlainTextElement {
  const clipped = clipText(text.text, max);
  return { ...text, text: clipped.length ? clipped : '…' };
}

/** At most 50 blocks and the aggregate text within budget; what is dropped is counted in a note before any buttons. */
function fitBlocks(blocks: KnownBlock[]): KnownBlock[] {
  const last = blocks.at(-1);
  const trailing: ActionsBlock[] = last?.type === 'actions' ? [last] : [];
  const body = blocks.slice(0, blocks.length - trailing.length);
  let dropped = 0;
  const note = (): ContextBlock => ({ type: 'context', elements: [{ type: 'mrkdwn', text: `…${dropped} more block${dropped === 1 ? '' : 's'} did not fit in one Slack message` }] });
  const size = (list: KnownBlock[]) => list.reduce<number>((n, b) => n + blockText(b), 0);
  const fits = () => body.length + trailing.length + (dropped ? 1 : 0) <= L.blocks && size(body) + size(trailing) + (dropped ? blockText(note()) : 0) <= BUDGET_BLOCK_TEXT;
  while (body.length > 1 && !fits()) {
    body.pop();
    dropped += 1;
  }
  return [...body, ...(dropped ? [note()] : []), ...trailing];
}

function blockText(block: KnownBlock): number {
  return blocksTextLength([block]);
}
