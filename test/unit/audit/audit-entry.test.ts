import { describe, expect, it } from 'vitest';
import { entryFields, entryFromFields, normaliseEntry, printable } from '../../../src/engine/audit/audit-entry.ts';
import { commandAuditEntry } from '../../../src/edge/command-audit.ts';
import { parseInvocation } from '../../../src/edge/slack/invocation.ts';
import { auditLineForSlack, auditTextForSlack, auditTextForTerminal } from '../../../src/engine/audit/audit-text.ts';
import { plainMentions } from '../../../src/core/mention.ts';

describe('audit entries', () => {
  it.each([
    ['a newline', 'prod\nrm -rf /', 'prod\\u{a}rm -rf /'],
    ['a bidi override', 'prod\u202Egnp.exe', 'prod\\u{202e}gnp.exe'],
    ['a zero-width space', 'pro\u200Bd', 'pro\\u{200b}d'],
    ['an escape sequence', '\u001b[31mred', '\\u{1b}[31mred'],
    ['a tag character', 'prod\u{E0041}', 'prod\\u{e0041}'],
  ])('shows %s as an escape, never raw', (_name, input, shown) => {
    expect(printable(input)).toBe(shown);
  });

  it('bounds every field', () => {
    const entry = normaliseEntry({ kind: 'command', actor: 'U1', action: 'x'.repeat(1000), outcome: 'answered', detail: 'y'.repeat(5000) }, 1);
    expect(entry.action.length).toBe(100);
    expect(entry.detail?.length).toBe(500);
    expect(entry.detail?.endsWith('…')).toBe(true);
  });

  it('round-trips through the stream field list', () => {
    const entry = normaliseEntry({ kind: 'repair-step', actor: 'U0LEAD1', channel: 'C0OPS', action: 'mark_broken', target: 'site-b', subject: 'node7', outcome: 'verified', planId: 'abcd', at: 1_700_000_000_000 }, 0);
    const back = entryFromFields('1700000000000-0', entryFields(entry));
    expect(back).toEqual({ id: '1700000000000-0', ...entry });
  });

  it('an unknown kind read back is shown as a command, not trusted', () => {
    expect(entryFromFields('5-0', ['kind', 'bogus', 'actor', 'U1']).kind).toBe('command');
  });
});

describe('the audit entry of a /maas command', () => {
  const invocation = (text: string, source: 'slash_command' | 'button' = 'slash_command') => parseInvocation({ text, user: 'U0OPS1', channel: 'C0OPS', source });

  it('a queued check', () => {
    expect(commandAuditEntry(invocation('dns-check prod'), { outcome: 'queued', jobIds: ['7'], reply: { text: 'running', visibility: 'in_channel' } })).toEqual({
      kind: 'command', actor: 'U0OPS1', channel: 'C0OPS', action: 'dns-check', target: 'prod', jobId: '7', outcome: 'queued', detail: '/maas dns-check prod → running',
    });
  });

  it('a policy refusal', () => {
    const e = commandAuditEntry(invocation('fix-macs site-b'), { outcome: 'refused', reason: 'no repair permission', reply: { text: 'no repair permission', visibility: 'ephemeral' } });
    expect(e).toMatchObject({ kind: 'refusal', action: 'fix-macs', target: 'site-b', outcome: 'refused' });
    expect(e.detail).toContain('no repair permission');
  });

  it('unreadable input is a refusal that quotes the input escaped', () => {
    const read = invocation('dns-check pr\u202Eod');
    expect(read.problem).toBeDefined();
    const e = commandAuditEntry(read, { outcome: 'unreadable', problem: read.problem!, reply: { text: 'x', visibility: 'ephemeral' } });
    expect(e).toMatchObject({ kind: 'refusal', action: '(unreadable input)', outcome: 'refused' });
    expect(normaliseEntry(e, 0).detail).toContain('pr\\u{202e}od');
  });

  it('a command whose queue failed is failed by its result, whatever its reply says', () => {
    const e = commandAuditEntry(invocation('mac-diff site-b'), { outcome: 'failed', error: new Error('the job queue is unavailable'), reply: { text: 'Sorry.', visibility: 'ephemeral' } });
    expect(e).toMatchObject({ outcome: 'failed', detail: '/maas mac-diff site-b → the job queue is unavailable' });
  });

  it('a reply that merely reads like a failure is not one', () => {
    const e = commandAuditEntry(invocation('sites'), { outcome: 'answered', reply: { text: '/maas sites failed: nothing (a site named "failed")', visibility: 'ephemeral' } });
    expect(e.outcome).toBe('answered');
  });

  it('an alert button names the command it stood for', () => {
    const e = commandAuditEntry(invocation('scan site-b mac-diff', 'button'), { outcome: 'queued', jobIds: ['9'], reply: { text: 'Scanning', visibility: 'ephemeral' } });
    expect(e).toMatchObject({ kind: 'command', action: 'button scan site-b mac-diff', target: 'site-b', outcome: 'queued', jobId: '9' });
  });
});

describe('audit text', () => {
  const entry = { id: '1-0', at: Date.UTC(2026, 10, 30, 12, 0, 3), kind: 'command' as const, actor: 'U0OPS1', channel: 'C0OPS', action: 'dns-check', target: 'prod', outcome: 'queued' };

  it('mentions Slack ids and nothing else', () => {
    expect(plainMentions(auditLineForSlack(entry))).toBe('2026-11-30 12:00:03 UTC · @U0OPS1 in #C0OPS · command dns-check prod → queued');
    expect(auditLineForSlack({ ...entry, actor: 'scheduler', channel: '<!channel>' })).toBe('2026-11-30 12:00:03 UTC · scheduler · command dns-check prod → queued');
  });

  it('says when there is nothing', () => {
    expect(auditTextForSlack([], 'prod')).toBe('The audit trail holds nothing about prod yet.');
    expect(auditTextForTerminal([])).toBe('The audit trail is empty.');
  });

  it('prints one line per entry for a terminal', () => {
    expect(auditTextForTerminal([{ ...entry, detail: 'why' }])).toBe('2026-11-30T12:00:03.000Z  command  U0OPS1  C0OPS  dns-check prod  queued  why');
  });
});
