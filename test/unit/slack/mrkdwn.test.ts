import { describe, expect, it } from 'vitest';
import { clipInside, clipText, codeSpan, escapeMrkdwn, toSlackText } from '../../../src/edge/slack/mrkdwn.ts';
import { channelMention, mention } from '../../../src/core/mention.ts';

describe('mrkdwn escaping', () => {
  it.each([
    ['a & b', 'a &amp; b'],
    ['<!channel> hi', '&lt;!channel&gt; hi'],
    ['<https://evil.example|click me>', '&lt;https://evil.example|click me&gt;'],
    ['&lt; already', '&amp;lt; already'],
  ])('escapes %j', (input, expected) => {
    expect(escapeMrkdwn(input)).toBe(expected);
  });

  it("keeps only the bot's own mentions live; typed references, broadcasts and links show as typed", () => {
    expect(toSlackText(`${mention('U0OPS1')} asked in ${channelMention('C0OPS')}: <@U0EVE> <!here> <cluster>|all & <http://x|y>`)).toBe(
      '<@U0OPS1> asked in <#C0OPS>: &lt;@U0EVE&gt; &lt;!here&gt; &lt;cluster&gt;|all &amp; &lt;http://x|y&gt;',
    );
  });

  it('turns backticks inside a code span into quotes so the span cannot end early', () => {
    expect(codeSpan('a`b <c>')).toBe("`a'b &lt;c&gt;`");
  });
});

describe('clipText', () => {
  it('leaves short text alone', () => {
    expect(clipText('short text', 20)).toBe('short text');
  });

  it('cuts at a word boundary and marks the cut', () => {
    const out = clipText('the quick brown fox jumps over the lazy dog', 20);
    expect(out).toBe('the quick brown fox…');
    expect(out.length).toBeLessThanOrEqual(20);
  });

  it('never splits an entity', () => {
    const escaped = escapeMrkdwn('x'.repeat(17) + '<<<<');
    const out = clipText(escaped, 21);
    expect(out).toBe('x'.repeat(17) + '…');
  });

  it('never splits a surrogate pair', () => {
    const out = clipText('😀'.repeat(10), 6);
    expect(out.length).toBeLessThanOrEqual(6);
    expect(out).toBe('😀😀…');
  });

  it('cuts one giant word where it must, within the limit', () => {
    const out = clipText('y'.repeat(5000), 3000);
    expect(out.length).toBe(3000);
    expect(out.endsWith('…')).toBe(true);
  });

  it('rebuilds markup around clipped content', () => {
    expect(clipInside('*Fix:* ', 'run this long command now please', '', 20)).toBe('*Fix:* run this…');
  });
});
