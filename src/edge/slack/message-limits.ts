/**
 * The limits Slack enforces when a message is posted, updated or sent to a response_url
 * (https://docs.slack.dev/reference/block-kit/blocks, https://docs.slack.dev/reference/methods/chat.postMessage):
 * at most 50 blocks; a section text of 3000 characters, a header of 150, a context element or a
 * section field of 2000, at most 10 of either; a button text of 75, a value of 2000; a message
 * `text` of 40,000. Beyond any of these Slack answers `invalid_blocks` (or `msg_too_long` for the
 * text). Blocks whose text adds up past about 12,000 characters get `msg_blocks_too_long` (an
 * undocumented aggregate limit; slackapi/bolt-js#2509 measured about 13,200 with markdown blocks
 * alone and less with other blocks beside them): every text in the blocks counts, buttons' and
 * confirm dialogs' included, in characters (code points), as S-BLOCK-TEXT in docs/slack-behaviour.md
 * says. chat.update refuses a `text` past 4,000 (S-UPDATE-TEXT).
 *
 * The bot's message budget (message-budget.ts) and the Slack emulator check the same limits here.
 */
export const SLACK_MESSAGE_LIMITS = {
  blocks: 50,
  sectionText: 3000,
  headerText: 150,
  contextElementText: 2000,
  contextElements: 10,
  fieldText: 2000,
  fields: 10,
  buttonText: 75,
  buttonValue: 2000,
  actionsElements: 25,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  messageText: 40_000,
  aggregateBlockText: 12_000,
  updateText: 4_000,
} as const;

export const UPDATE_TEXT_LIMIT = SLACK_MESSAGE_LIMITS.updateText;

export type MessageProblem = 'invalid_blocks' | 'msg_blocks_too_long' | 'msg_too_long';

/** Why Slack would refuse this text and these blocks, or undefined when it would take them. */
export function checkMessage(message: { text?: unknown; blocks?: unknown }): MessageProblem | undefined {
  if (typeof message.text === 'string' && message.text.length > SLACK_MESSAGE_LIMITS.messageText) return 'msg_too_long';
  return checkBlocks(message.blocks);
}

export function checkBlocks(blocks: unknown): Exclude<MessageProblem, 'msg_too_long'> | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks) || blocks.length > SLACK_MESSAGE_LIMITS.blocks) return 'invalid_blocks';
  for (const block of blocks) {
    if (!isObject(block) || typeof block.type !== 'string') return 'invalid_blocks';
    if (blockTextSize(block) === undefined) return 'invalid_blocks';
  }
  return blocksTextLength(blocks) > SLACK_MESSAGE_LIMITS.aggregateBlockText ? 'msg_blocks_too_long' : undefined;
}

/** Every text in the blocks, counted in characters (code points): text objects anywhere, and a markdown block's text. */
export function blocksTextLength(blocks: readonly unknown[]): number {
  let n = 0;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    const textual = node.type === 'mrkdwn' || node.type === 'plain_text' || node.type === 'markdown';
    if (textual && typeof node.text === 'string') n += [...node.text].length;
    for (const [key, value] of Object.entries(node)) if (typeof value === 'object' && !(textual && key === 'text')) visit(value);
  };
  visit(blocks);
  return n;
}

/** The block's text length, or undefined when Slack refuses the block. */
function blockTextSize(block: Record<string, unknown>): number | undefined {
  const L = SLACK_MESSAGE_LIMITS;
  switch (block.type) {
    case 'header':
      return textWithin(block.text, L.headerText);
    case 'section': {
      if (block.text === undefined && !Array.isArray(block.fields)) return undefined;
      const text = block.text === undefined ? 0 : textWithin(block.text, L.sectionText);
      const fields = block.fields === undefined ? 0 : listWithin(block.fields, L.fields, L.fieldText);
      return text === undefined || fields === undefined ? undefined : text + fields;
    }
    case 'context':
      return listWithin(block.elements, L.contextElements, L.contextElementText);
    case 'actions':
      return actionsValid(block.elements) ? 0 : undefined;
    default:
      return 0;
  }
}

function listWithin(items: unknown, maxItems: number, maxText: number): number | undefined {
  if (!Array.isArray(items) || items.length === 0 || items.length > maxItems) return undefined;
  let n = 0;
  for (const e of items) {
    const size = isObject(e) && e.type === 'image' ? 0 : textWithin(e, maxText);
    if (size === undefined) return undefined;
    n += size;
  }
  return n;
}

function actionsValid(elements: unknown): boolean {
  const L = SLACK_MESSAGE_LIMITS;
  if (!Array.isArray(elements) || elements.length === 0 || elements.length > L.actionsElements) return false;
  return elements.every((e) => {
    if (!isObject(e)) return false;
    if (e.type !== 'button') return true;
    if (textWithin(e.text, L.buttonText) === undefined) return false;
    if (typeof e.value === 'string' && e.value.length > L.buttonValue) return false;
    return e.confirm === undefined || confirmValid(e.confirm);
  });
}

function confirmValid(confirm: unknown): boolean {
  const L = SLACK_MESSAGE_LIMITS;
  if (!isObject(confirm)) return false;
  return (
    textWithin(confirm.title, L.confirmTitle) !== undefined &&
    textWithin(confirm.text, L.confirmText) !== undefined &&
    textWithin(confirm.confirm, L.confirmButton) !== undefined &&
    textWithin(confirm.deny, L.confirmButton) !== undefined
  );
}

function textWithin(text: unknown, max: number): number | undefined {
  if (!isObject(text) || (text.type !== 'mrkdwn' && text.type !== 'plain_text') || typeof text.text !== 'string') return undefined;
  if (text.text.length === 0 || text.text.length > max) return undefined;
  return text.text.length;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
