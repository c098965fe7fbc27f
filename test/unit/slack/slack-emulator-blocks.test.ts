import { describe, expect, it } from 'vitest';
import { checkBlocks } from '../../../lab/slack-emulator/index.ts';

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text } });

describe('the emulator refuses blocks as Slack does', () => {
  it.each<[string, unknown, string | undefined]>([
    ['no blocks', undefined, undefined],
    ['a plain section', [section('hi')], undefined],
    ['51 blocks', Array.from({ length: 51 }, () => section('x')), 'invalid_blocks'],
    ['50 blocks', Array.from({ length: 50 }, () => section('x')), undefined],
    ['a 3001-character section', [section('x'.repeat(3001))], 'invalid_blocks'],
    ['an empty section text', [section('')], 'invalid_blocks'],
    ['a 151-character header', [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }], 'invalid_blocks'],
    ['a 76-character button', [{ type: 'actions', elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'b'.repeat(76) } }] }], 'invalid_blocks'],
    ['five full sections (15,000 characters)', Array.from({ length: 5 }, () => section('x'.repeat(3000))), 'msg_blocks_too_long'],
    ['not an array', '{"type":"section"}', 'invalid_blocks'],
  ])('%s', (_name, blocks, expected) => {
    expect(checkBlocks(blocks)).toBe(expected);
  });
});
