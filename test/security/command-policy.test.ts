import { describe, expect, it } from 'vitest';
import { parseCommandText } from '../../commands/dispatch.ts';
import type { SlackPolicy } from '../../src/core/config.ts';
import { commandAccess, commandRefusal, mayRunRepairs } from '../../src/edge/slack/command-policy.ts';
import { cachedUserGroups } from '../../src/edge/slack/user-groups.ts';
import { toSlackText } from '../../src/edge/slack/mrkdwn.ts';

/*
 * Slack users acting beyond what they were given: a non-operator or a check-only operator running
 * repairs, a Slack user group that cannot be read being taken as a grant, and slash-command text
 * built to trick the parser (look-alike letters, invisible and control characters, shell syntax,
 * oversized input).
 */

const policy: SlackPolicy = {
  commandChannels: ['C0OPS'],
  operators: ['U0OPS1', 'U0OPS2', 'U0LEAD1'],
  approvers: ['U0LEAD1'],
  selfApproval: false,
  approvalTtlMs: 900_000,
  permissions: { checks: ['U0OPS1', 'U0OPS2', 'U0LEAD1'], repairs: ['U0LEAD1'] },
};

describe('who may run which /maas subcommand', () => {
  it.each([
    ['fix-macs', 'repair'],
    ['fix-dns', 'repair'],
    ['fix-resolver', 'repair'],
    ['silence', 'repair'],
    ['dns-check', 'check'],
    ['mac-diff', 'check'],
    ['scan', 'check'],
    ['alerts', 'check'],
    ['audit', 'check'],
    ['sites', 'check'],
  ])('%s needs %s', (name, access) => {
    expect(commandAccess(name)).toBe(access);
  });

  it('a declared access wins', () => {
    expect(commandAccess('fix-later', 'check')).toBe('check');
  });

  it.each([
    ['an operator runs a check', 'U0OPS1', 'C0OPS', 'dns-check', undefined],
    ['a repairer runs a repair', 'U0LEAD1', 'C0OPS', 'fix-macs', undefined],
    ['an unlisted channel', 'U0OPS1', 'C0RANDOM', 'dns-check', /^\/maas is not enabled in this channel\. Use it in <#C0OPS>\.$/],
    ['a non-operator', 'U0EVE', 'C0OPS', 'dns-check', /not a \/maas operator.*U0EVE/],
    ['a non-operator asking for help', 'U0EVE', 'C0OPS', 'help', /not a \/maas operator/],
    ['an operator without the repair permission', 'U0OPS1', 'C0OPS', 'fix-macs', /`\/maas fix-macs` changes things, and you do not have the repair permission \(slack\.permissions\.repairs.*<@U0LEAD1>.*U0OPS1/],
    ['an operator without the repair permission silencing', 'U0OPS2', 'C0OPS', 'silence', /repair permission/],
  ])('%s', async (_name, user, channel, sub, expected) => {
    const refusal = await commandRefusal(policy, user, channel, { name: sub });
    // As Slack shows it: the bot's own mentions live.
    if (expected) expect(toSlackText(refusal ?? '')).toMatch(expected);
    else expect(refusal).toBeUndefined();
  });

  it('an empty repairs list turns repairs from Slack off and says where to run them', async () => {
    const off = { ...policy, permissions: { repairs: [] } };
    expect(await commandRefusal(off, 'U0LEAD1', 'C0OPS', { name: 'fix-dns' })).toMatch(/nobody may run repairs from Slack \(slack\.permissions\.repairs is empty\)\. Run `maas-chatops fix-dns` from a terminal/);
    expect(await commandRefusal(off, 'U0LEAD1', 'C0OPS', { name: 'dns-check' })).toBeUndefined();
  });

  it('a checks list keeps an operator to help only', async () => {
    const narrow = { ...policy, permissions: { checks: ['U0OPS1'] } };
    expect(await commandRefusal(narrow, 'U0OPS2', 'C0OPS', { name: 'mac-diff' })).toMatch(/read-only check, and you may not run checks \(slack\.permissions\.checks/);
    expect(await commandRefusal(narrow, 'U0OPS2', 'C0OPS', { name: 'help' })).toBeUndefined();
    expect(await commandRefusal(narrow, 'U0OPS2', 'C0OPS', { name: 'fix-macs' })).toBeUndefined();
  });

  it('no permissions block = every operator may run everything (as before)', async () => {
    const { permissions: _ignored, ...open } = policy;
    expect(await commandRefusal(open, 'U0OPS1', 'C0OPS', { name: 'fix-macs' })).toBeUndefined();
  });
});

describe('a Slack user group (S…) in slack.operators or slack.permissions', () => {
  const groupPolicy: SlackPolicy = { commandChannels: [], approvers: [], selfApproval: false, approvalTtlMs: 900_000, operators: ['S0OPS'], permissions: { repairs: ['U0LEAD1', 'S0REPAIR'] } };
  const slackGroups: Record<string, string[]> = { S0OPS: ['U0OPS1', 'U0OPS2'], S0REPAIR: ['U0OPS2'] };

  it("is its members: a member of the operators group runs checks, only the repair group's member runs repairs, someone outside is refused", async () => {
    const groups = cachedUserGroups({ list: async (g) => slackGroups[g] ?? [], ttlMs: 60_000 });
    expect(await commandRefusal(groupPolicy, 'U0OPS1', 'C0OPS', { name: 'dns-check' }, groups)).toBeUndefined();
    expect(await commandRefusal(groupPolicy, 'U0OPS2', 'C0OPS', { name: 'fix-dns' }, groups)).toBeUndefined();
    expect(toSlackText((await commandRefusal(groupPolicy, 'U0OPS1', 'C0OPS', { name: 'fix-dns' }, groups)) ?? '')).toMatch(/do not have the repair permission .*Ask one of <@U0LEAD1>, the members of user group S0REPAIR to run it/);
    expect(await commandRefusal(groupPolicy, 'U0EVE', 'C0OPS', { name: 'dns-check' }, groups)).toMatch(/not a \/maas operator/);
  });

  it('a group that cannot be read grants nothing, and the refusal says why', async () => {
    const groups = cachedUserGroups({ list: () => Promise.reject(Object.assign(new Error('An API error occurred: missing_scope'), { data: { ok: false, error: 'missing_scope', needed: 'usergroups:read' } })), ttlMs: 60_000 });
    expect(await commandRefusal(groupPolicy, 'U0OPS1', 'C0OPS', { name: 'dns-check' }, groups)).toContain('The operators group S0OPS could not be read: missing_scope usergroups:read, so it grants nothing');
  });

  it('shows the Plan button to whoever a listed group may hold; the click is authorized again', () => {
    expect(mayRunRepairs(groupPolicy, 'U0EVE')).toBe(true);
    expect(mayRunRepairs({ ...groupPolicy, operators: ['U0OPS1'], permissions: { repairs: ['U0OPS1'] } }, 'U0EVE')).toBe(false);
  });
});

describe('the slash-command parser refuses tricky input with a clear reason', () => {
  it.each([
    ['a Cyrillic look-alike o', 'dns-check pr\u043Ed', /"о" \(U\+043E\), which is not plain ASCII.*look-alike/],
    ['a Greek look-alike in the subcommand', 'dns-\u0441heck prod', /U\+0441/],
    ['a fullwidth letter', 'dns-check \uFF50rod', /U\+FF50/],
    ['a right-to-left override', 'dns-check prod\u202E', /control or invisible characters/],
    ['a left-to-right isolate', 'dns-check \u2066prod', /control or invisible characters/],
    ['a zero-width space', 'dns-check pro\u200Bd', /control or invisible characters/],
    ['a zero-width joiner', 'dns-check pro\u200Dd', /control or invisible characters/],
    ['a byte-order mark', '\uFEFFdns-check prod', /control or invisible characters/],
    ['a soft hyphen', 'dns-check pro\u00ADd', /control or invisible characters/],
    ['a line separator', 'dns-check prod\u2028fix-dns prod', /control or invisible characters/],
    ['a tag character', 'dns-check prod\u{E0001}', /control or invisible characters/],
    ['a variation selector', 'dns-check prod\uFE0F', /control or invisible characters/],
    ['a carriage return', 'dns-check prod\rfix-dns prod', /control or invisible characters/],
    ['an escape sequence', 'dns-check \u001b[2Kprod', /control or invisible characters/],
    ['a NUL', 'dns-check prod\u0000', /control or invisible characters/],
    ['a C1 control', 'dns-check prod\u0085', /control or invisible characters/],
    ['an emoji', 'dns-check prod \u{1F525}', /U\+1F525/],
    ['oversized text', `dns-check ${'a'.repeat(600)}`, /the limit is 500/],
    ['an oversized word', `dns-check ${'a'.repeat(150)}`, /150 characters long; names are at most 63/],
  ])('%s', async (_name, text, problem) => {
    const parsed = parseCommandText(text);
    expect('problem' in parsed && parsed.problem).toMatch(problem);
  });

  it('reads pasted no-break spaces as spaces', () => {
    expect(parseCommandText('dns-check\u00A0prod')).toEqual({ words: ['dns-check', 'prod'] });
  });

  it('keeps shell syntax as inert words (targets are then looked up in the config)', () => {
    expect(parseCommandText('dns-check $(reboot);`id`|x')).toEqual({ words: ['dns-check', '$(reboot);`id`|x'] });
  });
});
