import { describe, expect, it } from 'vitest';
import type { SlackPolicy } from '../../../src/core/config.ts';
import { commandRefusal } from '../../../src/edge/slack/command-policy.ts';
import { toSlackText } from '../../../src/edge/slack/mrkdwn.ts';

const base: SlackPolicy = { commandChannels: [], approvers: [], selfApproval: false, approvalTtlMs: 900_000 };

describe('who may run /maas where', () => {
  it.each<[string, Partial<SlackPolicy>, string, string, RegExp | undefined]>([
    ['any channel, anyone', {}, 'U1', 'C1', undefined],
    ['listed channel', { commandChannels: ['C0OPS'] }, 'U1', 'C0OPS', undefined],
    ['other channel', { commandChannels: ['C0OPS', 'C0NET'] }, 'U1', 'C1', /^\/maas is not enabled in this channel\. Use it in <#C0OPS>, <#C0NET>\.$/],
    ['operator', { operators: ['U0OPS1'] }, 'U0OPS1', 'C1', undefined],
    ['not an operator', { operators: ['U0OPS1'] }, 'U9', 'C1', /not a \/maas operator.*U9/],
    ['empty operator list lets nobody in', { operators: [] }, 'U0OPS1', 'C1', /not a \/maas operator/],
  ])('%s', async (_name, policy, user, channel, expected) => {
    const refusal = await commandRefusal({ ...base, ...policy }, user, channel);
    if (expected) expect(toSlackText(refusal ?? '')).toMatch(expected);
    else expect(refusal).toBeUndefined();
  });
});
