import { describe, expect, it } from 'vitest';
import { blocksText } from '../../../lab/transcript.ts';
import { checkMessage } from '../../../src/edge/slack/message-limits.ts';
import { APPROVE_ACTION, planThread, renderPlanMessage } from '../../../src/edge/slack/plan-render.ts';
import type { PlanMessageView } from '../../../src/engine/repair/plan-view.ts';
import type { Report } from '../../../src/core/report.ts';

const steps = Array.from({ length: 50 }, (_, i) => ({ subject: `site-c-vm${i}`, action: 'set-mac', detail: `eth0 52:54:00:c0:00:${i} → 52:54:00:c1:00:${i}` }));
const report: Report = {
  kind: 'fix-macs',
  target: 'site-c',
  status: 'critical',
  verdict: 'Plan 1 of 6: update 50 MACs on 50 machines at site-c; 250 more machines in the next 5 plans (repair.maxSubjects is 50)',
  findings: steps.map((s) => ({ code: 'MAC_DRIFT', severity: 'critical', subject: s.subject, summary: 'drifted', evidence: {}, fix: '/maas fix-macs site-c' })),
  plan: { id: 'abcdef0123456789', steps },
  startedAt: '2026-11-30T03:00:00.000Z',
  durationMs: 10,
};
const view = (over: Partial<PlanMessageView>): PlanMessageView => ({ planId: 'abcdef0123456789', report, state: 'pending', requester: 'U0OPS1', expiresAt: Date.UTC(2026, 10, 30, 4), approvable: true, deferred: 250, ...over });
type Button = { action_id: string; text: { text: string }; confirm?: { text: { text: string }; confirm: { text: string } } };
const buttons = (blocks: unknown[]) => (blocks as { type: string; elements?: Button[] }[]).filter((b) => b.type === 'actions').flatMap((b) => b.elements ?? []);

describe('plan messages', () => {
  it('a batch reads "Plan 1 of 6: 50 machines", and Approve asks to confirm with the number of steps and machines', () => {
    const message = renderPlanMessage(view({}));
    expect(message.text).toMatch(/^CRITICAL: Plan 1 of 6: update 50 MACs on 50 machines at site-c/);
    const approve = buttons(message.blocks).find((b) => b.action_id === APPROVE_ACTION);
    expect(approve?.confirm?.text.text).toBe('Runs 50 steps on 50 machines at site-c, one at a time, each change read back; it stops at the first that does not verify.');
    expect(approve?.confirm?.confirm.text).toBe('Approve and run');
    expect(checkMessage(message)).toBeUndefined();
  });

  it('the message counts steps, machines and writes; the thread holds every step whole', () => {
    const message = renderPlanMessage(view({}));
    expect(blocksText(message.blocks)).toContain('*50 steps* on 50 machines: 50 writes, one at a time, each read back. Every step, whole, is in the thread.');
    expect(blocksText(message.blocks).length).toBeLessThanOrEqual(12);
    const thread = planThread(view({}));
    const steps = thread.messages.flatMap((m) => blocksText(m.blocks)).filter((l) => /^\d+\. \*set-mac\*/.test(l));
    expect(steps.map((l) => l)).toEqual(report.plan!.steps.map((st, i) => `${i + 1}. *set-mac* ${st.subject} — ${st.detail}`));
    for (const m of thread.messages) expect(checkMessage(m)).toBeUndefined();
  });

  it('once done it shows what changed and was read back and the re-check, never the findings it repaired; it offers the next batch', () => {
    const results = steps.map((s) => ({ subject: s.subject, action: s.action, outcome: 'verified' as const, detail: `read back ${s.detail.split('→ ')[1]}` }));
    const done = renderPlanMessage(
      view({ state: 'done', decidedBy: 'U0LEAD2', decidedAt: Date.UTC(2026, 10, 30, 3, 5), report: { ...report, verdict: 'fix-macs site-c done: 50 of 50 steps verified', results }, note: 'Re-checked after the run: 50 of 300 machines at site-c match their live MACs.' }),
    );
    const text = blocksText(done.blocks).join('\n');
    // The first line names the repair once: `fix-macs site-c: Done: …`, not `fix-macs site-c: fix-macs site-c done: …`.
    expect(text.split('\n')[0]).toBe(':white_check_mark: *OK* · fix-macs site-c: Done: 50 of 50 steps verified');
    expect(text).toContain('*50 of 50 steps verified* on 50 machines');
    expect(text).toContain('Re-checked after the run: 50 of 300 machines at site-c match their live MACs.');
    expect(text).not.toMatch(/MAC_DRIFT|\*Fix:\*|\*Plan\* `/);
    expect(buttons(done.blocks).map((b) => b.text.text)).toEqual(['Plan the next batch (250 left)']);
    // Times are Slack date tokens: each reader's zone, UTC as the fallback.
    expect(JSON.stringify(done.blocks)).toContain('Done, approved by <@U0LEAD2> at <!date^1796007900^{date_short_pretty} {time_secs}|2026-11-30 03:05:00 UTC>');
    expect(checkMessage(done)).toBeUndefined();
  });
});
