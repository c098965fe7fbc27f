import { describe, expect, it } from 'vitest';
import { ALERT_ACTIONS, alertEvidence, renderAlert, threadNote } from '../../../src/edge/alerts/alert-message.ts';
import type { AlertRecord } from '../../../src/edge/alerts/alert-record.ts';
import { checkBlocks } from '../../../lab/slack-emulator/index.ts';
import type { Finding } from '../../../src/core/report.ts';

const T0 = Date.parse('2026-11-30T12:00:00Z');
const drift = (i: number): Finding => ({
  code: 'MAC_DRIFT',
  severity: 'critical',
  subject: `node-${i}`,
  summary: `node-${i}: MAAS records 52:54:00:00:00:${String(i).padStart(2, '0')}, the VM has another`,
  evidence: { hostname: `node-${i}`, recorded: 'aa', live: 'bb' },
});

function record(overrides: Partial<AlertRecord> = {}, n = 3): AlertRecord {
  const findings = Array.from({ length: n }, (_, i) => drift(i + 1));
  return {
    id: 'abc',
    check: 'mac-diff',
    target: 'site-b',
    kind: 'drift',
    state: 'open',
    openedAt: T0,
    lastSeenAt: T0 + 25 * 60_000,
    reopened: 0,
    status: 'critical',
    verdict: `${n} machines have drifted MACs`,
    findings,
    members: findings.map((f) => ({ fingerprint: f.subject, code: f.code, subject: f.subject, digest: '', since: T0 })),
    ...overrides,
  };
}

type Button = { action_id: string; value: string; text: { text: string } };
const buttons = (blocks: unknown[] | undefined): Button[] =>
  (blocks ?? []).flatMap((b) => ((b as { type: string }).type === 'actions' ? ((b as { elements: Button[] }).elements) : []));
const allText = (blocks: unknown[] | undefined) => JSON.stringify(blocks);

describe('renderAlert', () => {
  it('an open drift alert: its verdict, its age, its codes and the Plan fix, Re-check and Silence 1h buttons; each finding in its thread', () => {
    const msg = renderAlert(record(), T0 + 25 * 60_000);
    expect(msg.text).toBe('CRITICAL: 3 machines have drifted MACs (mac-diff site-b)');
    expect(msg.blocks?.map((b) => b.type)).toEqual(['section', 'context', 'actions']);
    expect(allText(msg.blocks)).toContain('MAC_DRIFT');
    expect(allText(msg.blocks)).toContain('Open for 25m');
    const thread = alertEvidence(record()).messages.map((m) => allText(m.blocks)).join('\n');
    for (const node of ['node-1', 'node-2', 'node-3']) expect(thread).toContain(`\`MAC_DRIFT\` *critical* — ${node}`);
    const bs = buttons(msg.blocks);
    expect(bs.map((b) => b.action_id)).toEqual([ALERT_ACTIONS.planFix, ALERT_ACTIONS.recheck, ALERT_ACTIONS.silence]);
    expect(bs.map((b) => b.text.text)).toEqual(['Plan fix', 'Re-check now', 'Silence 1h']);
    expect(JSON.parse(bs[0]!.value)).toEqual({ check: 'mac-diff', target: 'site-b' });
    expect(checkBlocks(msg.blocks)).toBeUndefined();
  });

  it('a could-not-check alert says so and offers a re-check, no fix', () => {
    const msg = renderAlert(record({ kind: 'unchecked', status: 'error', verdict: 'Could not check site-b (mac-diff): MAAS answered 401' }), T0);
    expect(msg.text).toBe('Could not check site-b (mac-diff): MAAS answered 401');
    expect(allText(msg.blocks)).toContain('COULD NOT CHECK');
    expect(buttons(msg.blocks).map((b) => b.action_id)).toEqual([ALERT_ACTIONS.recheck, ALERT_ACTIONS.silence]);
  });

  it('a warning-only alert offers no "Plan fix": there is nothing a repair should change', () => {
    const msg = renderAlert(record({ status: 'warning' }), T0);
    expect(buttons(msg.blocks).map((b) => b.text.text)).toEqual(['Re-check now', 'Silence 1h']);
  });

  it('an alert opened this second reads "Opened just now", never "Open for 0ms"', () => {
    const text = allText(renderAlert(record(), T0).blocks);
    expect(text).toContain('Opened just now');
    expect(text).not.toMatch(/Open for 0ms/);
  });

  it('a resolved alert says how long it lasted and drops the buttons', () => {
    const msg = renderAlert(record({ state: 'resolved', resolvedAt: T0 + 90 * 60_000 }), T0 + 90 * 60_000);
    expect(msg.text).toBe('RESOLVED after 1h 30m: 3 machines have drifted MACs (mac-diff site-b)');
    expect(allText(msg.blocks)).toContain('Resolved after 1h 30m');
    expect(buttons(msg.blocks)).toEqual([]);
  });

  it('a resolved alert names each finding code once in "Was:", with its count, however many machines it had', () => {
    const inUse = { fingerprint: 'node-x', code: 'MAC_IN_USE', subject: 'node-x', digest: '', since: T0 };
    const base = record({}, 12);
    const msg = renderAlert({ ...base, state: 'resolved', resolvedAt: T0 + 60_000, members: [...base.members, inUse] }, T0 + 60_000);
    const was = allText(msg.blocks).match(/Was: [^"]*/)?.[0] ?? '';
    expect(was.match(/MAC_DRIFT/g)).toHaveLength(1);
    expect(was).toContain('`MAC_DRIFT` ×12: node-1, node-2');
    expect(was).toContain('…and 2 more; `MAC_IN_USE` node-x');
  });

  it('a storm of 200 drifted machines is one message within Slack limits', () => {
    const msg = renderAlert(record({}, 200), T0);
    expect(checkBlocks(msg.blocks)).toBeUndefined();
    expect(allText(msg.blocks)).toContain('200 findings (`MAC_DRIFT` ×200), the evidence is in the thread');
    // The thread: a sample Slack accepts, the whole of it in a file.
    const thread = alertEvidence(record({}, 200));
    for (const m of thread.messages) expect(checkBlocks(m.blocks)).toBeUndefined();
    expect(thread.files.map((f) => f.filename)).toEqual(['site-b-evidence.txt']);
  });

  it('shows who silenced the target', () => {
    const msg = renderAlert(record(), T0, { target: 'site-b', by: 'U0LEAD1', at: T0, until: T0 + 3600_000 });
    expect(allText(msg.blocks)).toContain('silenced by <@U0LEAD1>');
  });

  it('escapes names so a subject cannot ping a channel', () => {
    const evil = record({ verdict: '<!channel> drift' });
    expect(renderAlert(evil, T0).text).not.toContain('<!channel>');
  });
});

describe('threadNote', () => {
  const m = (s: string) => ({ fingerprint: s, code: 'MAC_DRIFT', subject: s, digest: '', since: T0 });
  it('lists what came and went', () => {
    const note = threadNote('changed', { added: [m('node-10')], removed: [m('node-2')], changed: [] }, record(), T0);
    expect(note).toContain('1 new: `MAC_DRIFT` node-10');
    expect(note).toContain('1 no longer found: `MAC_DRIFT` node-2');
  });
  it('says how long a resolved alert lasted', () => {
    expect(threadNote('resolved', { added: [], removed: [], changed: [] }, record(), T0 + 25 * 60_000)).toMatch(/It lasted 25m\.$/);
  });
  it('says a re-opened alert came back', () => {
    const note = threadNote('reopened', { added: [], removed: [], changed: [] }, record({ reopened: 1, lastResolvedAt: T0 }), T0 + 4 * 60_000);
    expect(note).toMatch(/^:repeat: Back after 4m resolved: re-opened \(1st time\)/);
  });
  it('has nothing to add while an alert is unchanged', () => {
    expect(threadNote('unchanged', { added: [], removed: [], changed: [] }, record(), T0)).toBeUndefined();
  });
});
