import type { KnownBlock } from '@slack/types';
import type { AnswerMessage } from './answer-render.ts';
import type { EvidenceThread } from './evidence-thread.ts';
import { BUDGET_BLOCK_TEXT } from './message-budget.ts';

const MAX_BLOCKS = 45;

/**
 * One target of an `all` answer, in the summary's thread: its short answer and its evidence in one
 * reply when they fit (a thread has no thread of its own), else the answer and then the evidence.
 */
export function answerWithEvidence(answer: AnswerMessage, evidence: EvidenceThread): EvidenceThread {
  const [only, ...more] = evidence.messages;
  if (!only || more.length) return { messages: [answer, ...evidence.messages], files: evidence.files };
  const actions = answer.blocks.filter((b) => b.type === 'actions');
  const body = answer.blocks.filter((b) => b.type !== 'actions');
  const blocks: KnownBlock[] = [...body.slice(0, -1), ...only.blocks, ...body.slice(-1), ...actions];
  const fits = blocks.length <= MAX_BLOCKS && blocks.reduce((n, b) => n + textOf(b), 0) <= BUDGET_BLOCK_TEXT;
  return fits ? { messages: [{ text: answer.text, blocks }], files: evidence.files } : { messages: [answer, only], files: evidence.files };
}

function textOf(block: KnownBlock): number {
  if (block.type === 'section') return block.text?.text.length ?? 0;
  if (block.type === 'context') return block.elements.reduce((n, e) => n + ('text' in e && typeof e.text === 'string' ? e.text.length : 0), 0);
  return 0;
}
