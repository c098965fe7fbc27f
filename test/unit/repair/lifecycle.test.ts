import { describe, expect, it } from 'vitest';
import { executeStep, stateOf, storedPhase, transition, type RepairEvent, type RepairPhase, type RepairState } from '../../../src/engine/repair/lifecycle.ts';
import type { PlanState } from '../../../src/engine/repair/plan-store.ts';

const planId = '0123456789abcdef';
const STATES: Record<RepairPhase, RepairState> = {
  stored: { phase: 'stored', planId },
  approved: { phase: 'approved', planId, by: 'U0LEAD1' },
  rejected: { phase: 'rejected', planId, by: 'U0LEAD1' },
  expired: { phase: 'expired', planId },
  're-measured': { phase: 're-measured', planId, by: 'U0LEAD1' },
  executing: { phase: 'executing', planId, by: 'U0LEAD1', resumed: false },
  done: { phase: 'done', planId, by: 'U0LEAD1' },
  failed: { phase: 'failed', planId, by: 'U0LEAD1', why: 'steps' },
  superseded: { phase: 'superseded', planId, by: 'U0LEAD1', freshPlanId: 'fedcba9876543210' },
};

const EVENTS: Record<string, RepairEvent> = {
  approve: { type: 'approve', by: 'U0LEAD2' },
  reject: { type: 'reject', by: 'U0LEAD2' },
  expire: { type: 'expire' },
  'undo-approval by the approver': { type: 'undo-approval', by: 'U0LEAD1' },
  'undo-approval by someone else': { type: 'undo-approval', by: 'U0LEAD2' },
  're-measure, same world': { type: 're-measure', freshPlanId: planId },
  're-measure, world changed': { type: 're-measure', freshPlanId: 'fedcba9876543210' },
  unmeasurable: { type: 'unmeasurable' },
  start: { type: 'start' },
  resume: { type: 'resume' },
  'finish, every step went': { type: 'finish', allStepsWent: true },
  'finish, a step did not': { type: 'finish', allStepsWent: false },
};

/** Every allowed transition and the state it leads to; every other pair is refused. */
const ALLOWED: Record<string, RepairState> = {
  'stored + approve': { phase: 'approved', planId, by: 'U0LEAD2' },
  'stored + reject': { phase: 'rejected', planId, by: 'U0LEAD2' },
  'stored + expire': { phase: 'expired', planId },
  'approved + undo-approval by the approver': { phase: 'stored', planId },
  'approved + re-measure, same world': { phase: 're-measured', planId, by: 'U0LEAD1' },
  'approved + re-measure, world changed': { phase: 'superseded', planId, by: 'U0LEAD1', freshPlanId: 'fedcba9876543210' },
  'approved + unmeasurable': { phase: 'failed', planId, by: 'U0LEAD1', why: 'unmeasurable' },
  're-measured + start': { phase: 'executing', planId, by: 'U0LEAD1', resumed: false },
  'executing + resume': { phase: 'executing', planId, by: 'U0LEAD1', resumed: true },
  'executing + finish, every step went': { phase: 'done', planId, by: 'U0LEAD1' },
  'executing + finish, a step did not': { phase: 'failed', planId, by: 'U0LEAD1', why: 'steps' },
};

const PAIRS = Object.entries(STATES).flatMap(([phase, state]) => Object.entries(EVENTS).map(([name, event]) => [`${phase} + ${name}`, state, event] as const));

describe('repair lifecycle', () => {
  it('covers every state and every event (9 × 12 pairs, 11 allowed)', () => {
    expect(PAIRS).toHaveLength(108);
    expect(PAIRS.filter(([pair]) => pair in ALLOWED)).toHaveLength(Object.keys(ALLOWED).length);
  });

  it.each(PAIRS.filter(([pair]) => pair in ALLOWED))('allows %s', (pair, state, event) => {
    expect(transition(state, event)).toEqual({ ok: true, state: ALLOWED[pair] });
  });

  it.each(PAIRS.filter(([pair]) => !(pair in ALLOWED)))('refuses %s', (_pair, state, event) => {
    expect(transition(state, event)).toEqual({ ok: false, refused: `plan ${planId}: ${event.type} is not possible when the plan is ${state.phase}` });
  });

  it('never runs a rejected, expired, superseded or finished plan: no event leads from them to executing', () => {
    for (const phase of ['rejected', 'expired', 'superseded', 'done', 'failed'] as const) {
      for (const event of Object.values(EVENTS)) expect(transition(STATES[phase], event).ok).toBe(false);
    }
  });
});

describe('the stored state and what an execute job does with it', () => {
  const stored = (state: PlanState) => ({ plan: { id: planId }, state, decidedBy: 'U0LEAD1' });

  it.each([
    ['pending', false, false, 'stored', 'refuse'],
    ['approved', false, false, 'approved', 're-measure'],
    ['rejected', false, false, 'rejected', 'refuse'],
    ['expired', false, false, 'expired', 'refuse'],
    // A run took it and stopped before its first step: nothing ran, so it is measured again.
    ['executing', false, false, 'approved', 're-measure'],
    ['executing', true, false, 'executing', 'resume'],
    ['done', true, true, 'done', 'report-run'],
    ['failed', true, true, 'failed', 'report-run'],
    ['done', true, false, 'done', 'refuse'],
    ['superseded', false, false, 'superseded', 'refuse'],
  ] as const)('%s (journal begun: %s, results: %s) is %s: %s', (state, begun, results, phase, step) => {
    const s = stateOf(stored(state), begun);
    expect(s.phase).toBe(phase);
    expect(executeStep(s, results)).toBe(step);
  });

  it('stores every state under the name the store knows, re-measured as approved', () => {
    expect(Object.values(STATES).map(storedPhase)).toEqual(['pending', 'approved', 'rejected', 'expired', 'approved', 'executing', 'done', 'failed', 'superseded']);
  });
});
