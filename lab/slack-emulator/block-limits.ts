/**
 * The Block Kit limits Slack enforces when a message is posted: the emulator refuses exactly what
 * the bot's message budget keeps out (src/edge/slack/message-limits.ts cites Slack's documentation).
 */
import { SLACK_MESSAGE_LIMITS } from '../../src/edge/slack/message-limits.ts';

export { checkBlocks, checkMessage, type MessageProblem } from '../../src/edge/slack/message-limits.ts';

export const BLOCK_LIMITS = {
  blocks: SLACK_MESSAGE_LIMITS.blocks,
  sectionText: SLACK_MESSAGE_LIMITS.sectionText,
  headerText: SLACK_MESSAGE_LIMITS.headerText,
  buttonText: SLACK_MESSAGE_LIMITS.buttonText,
  buttonValue: SLACK_MESSAGE_LIMITS.buttonValue,
  aggregateText: SLACK_MESSAGE_LIMITS.aggregateBlockText,
};
