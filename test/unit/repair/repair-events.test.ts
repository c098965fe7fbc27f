import { describe, expect, it } from 'vitest';
import { executePlan, type StepRunner } from '../../../src/engine/repair/executor.ts';
import { memoryJournal } from '../../../src/engine/repair/journal.ts';
import type { PlanStep } from '../../../src/engine/repair/plan-step.ts';
import { withId } from '../../../src/engine/repair/plan.ts';
import { RepairEvents, type RepairRunEvent } from '../../../src/engine/repair/repair-events.ts';

const machine = (hostname: string) => ({ systemId: `id-${hostname}`, hostname });
const STEPS: PlanStep[] = [
  { subject: 'vm1', action: 'mark-broken', detail: 'd', params: { ...machine('vm1'), status: 'Failed commissioning', owner: 'admin' } },
  { subject: 'vm1', action: 'set-mac', detail: 'd', params: { ...machine('vm1'), interfaceId: 1, interface: 'eth0', from: 'a', to: 'b' } },
  { subject: 'vm1', action: 'commission', detail: 'd', params: machine('vm1') },
  { subject: 'vm2', action: 'set-mac', detail: 'd', params: { ...machine('vm2'), interfaceId: 1, interface: 'eth0', from: 'a', to: 'b' } },
];
const plan = withId({ kind: 'fix-macs', target: 'site-b', steps: STEPS, refusals: [], findings: [], verdict: 'Plan' });

/** set-mac on vm1 fails: the restoring commission still runs, vm2 is skipped. */
const runner: StepRunner = {
  run: async (step) => (step.subject === 'vm1' && step.action === 'set-mac' ? { outcome: 'failed', detail: 'MAAS said 409' } : { outcome: 'verified', detail: 'read back' }),
};

function recorded(): { events: RepairEvents; seen: string[] } {
  const events = new RepairEvents();
  const seen: string[] = [];
  const line = (e: RepairRunEvent): string => {
    if (e.type === 'step-started') return `started ${e.index} ${e.step.action}`;
    if (e.type === 'step-ended') return `${e.result.outcome} ${e.index} ${e.result.action}${e.replayed ? ' (journal)' : ''}`;
    if (e.type === 'subject-done') return `subject ${e.subject}: ${e.results.length}`;
    return e.type;
  };
  for (const type of ['step-started', 'step-ended', 'subject-done', 'progress', 'run-ended'] as const) events.on(type, (e) => void seen.push(line(e)));
  return { events, seen };
}

describe('the executor’s step events', () => {
  it('says when each step starts and how it ended, then each subject, in order', async () => {
    const { events, seen } = recorded();
    await executePlan(plan, { runner, journal: memoryJournal(), maxSubjects: 10, events });
    expect(seen).toEqual([
      'started 0 mark-broken',
      'verified 0 mark-broken',
      'started 1 set-mac',
      'failed 1 set-mac',
      'started 2 commission',
      'verified 2 commission',
      'subject vm1: 3',
      'skipped 3 set-mac',
      'subject vm2: 1',
    ]);
  });

  it('replays from the journal without starting a step again', async () => {
    const journal = memoryJournal();
    await executePlan(plan, { runner, journal, maxSubjects: 10 });
    const { events, seen } = recorded();
    await executePlan(plan, { runner, journal, maxSubjects: 10, events });
    expect(seen.filter((s) => s.startsWith('started'))).toEqual([]);
    expect(seen.slice(0, 3)).toEqual(['verified 0 mark-broken (journal)', 'failed 1 set-mac (journal)', 'verified 2 commission (journal)']);
  });

  it('stops the run when a listener fails (a lost lease while posting), before the next subject', async () => {
    const events = new RepairEvents();
    const ran: string[] = [];
    events.on('subject-done', () => {
      throw new Error('lease lost');
    });
    const counting: StepRunner = { run: async (step) => (ran.push(step.subject), { outcome: 'verified', detail: 'ok' }) };
    await expect(executePlan(plan, { runner: counting, journal: memoryJournal(), maxSubjects: 10, events })).rejects.toThrow('lease lost');
    expect(new Set(ran)).toEqual(new Set(['vm1']));
  });
});
