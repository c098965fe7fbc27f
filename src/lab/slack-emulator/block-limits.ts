/**
 * The Block Kit limits Slack enforces when a message is posted
 * (https://docs.slack.dev/reference/block-kit/blocks): more than 50 blocks, a section text over
 * 3000 characters, a header over 150, a button text over 75 or a value over 2000 → `invalid_blocks`;
 * blocks whose text adds up past about 13,000 characters → `msg_blocks_too_long` (an undocumented
 * aggregate limit, measured in slackapi/bolt-js#2509).
 */
export const BLOCK_LIMITS = { blocks: 50, sectionText: 3000, headerText: 150, buttonText: 75, buttonValue: 2000, aggregateText: 13_000 };

export type BlocksProblem = 'invalid_blocks' | 'msg_blocks_too_long';

export function checkBlocks(blocks: unknown): BlocksProblem | undefined {
  if (blocks === undefined) return undefined;
  if (!Array.isArray(blocks) || blocks.length > BLOCK_LIMITS.blocks) return 'invalid_blocks';
  let total = 0;
  for (const block of blocks) {
    if (!isObject(block) || typeof block.type !== 'string') return 'invalid_blocks';
    const problem = checkBlock(block);
    if (problem !== undefined && typeof problem === 'string') return problem;
    total += problem ?? 0;
  }
  return total > BLOCK_LIMITS.aggregateText ? 'msg_blocks_too_long' : undefined;
}

/** The block's text length, or why Slack refuses it. */
function checkBlock(block: Record<string, unknown>): number | BlocksProblem {
  switch (block.type) {
    case 'header':
      return textWithin(block.text, BLOCK_LIMITS.headerText);
    case 'section': {
      if (block.text === undefined && !Array.isArray(block.fields)) return 'invalid_blocks';
      return block.text === undefined ? 0 : textWithin(block.text, BLOCK_LIMITS.sectionText);
    }
    case 'context': {
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10) return 'invalid_blocks';
      let n = 0;
      for (const e of block.elements) {
        const size = isObject(e) && e.type === 'image' ? 0 : textWithin(e, BLOCK_LIMITS.sectionText);
        if (typeof size === 'string') return size;
        n += size;
      }
      return n;
    }
    case 'actions': {
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 25) return 'invalid_blocks';
      for (const e of block.elements) {
        if (!isObject(e)) return 'invalid_blocks';
        if (e.type === 'button') {
          if (typeof textWithin(e.text, BLOCK_LIMITS.buttonText) === 'string') return 'invalid_blocks';
          if (typeof e.value === 'string' && e.value.length > BLOCK_LIMITS.buttonValue) return 'invalid_blocks';
        }
      }
      return 0;
    }
    default:
      return 0;
  }
}

function textWithin(text: unknown, max: number): number | BlocksProblem {
  if (!isObject(text) || (text.type !== 'mrkdwn' && text.type !== 'plain_text') || typeof text.text !== 'string') return 'invalid_blocks';
  if (text.text.length === 0 || text.text.length > max) return 'invalid_blocks';
  return text.text.length;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
