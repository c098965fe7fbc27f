import type { PlanState } from './plan-store.ts';

/**
 * The life of one repair plan, as pure transitions (no I/O):
 *
 *   stored → approved | rejected | expired
 *   approved → re-measured (the world still matches the plan) | superseded (it does not) | failed (it could not be measured)
 *   approved → stored (an approval whose run could not be queued is taken back)
 *   re-measured → executing;  executing → executing (resumed after a restart) | done | failed
 *
 * The drivers (the CLI, the plan job, the execute job) do the I/O and ask this module what may
 * happen next; the plan store keeps the state in Redis, each change one atomic step there.
 */
export type RepairState =
  | { phase: 'stored'; planId: string }
  | { phase: 'approved'; planId: string; by: string }
  | { phase: 'rejected'; planId: string; by: string }
  | { phase: 'expired'; planId: string }
  | { phase: 're-measured'; planId: string; by: string }
  | { phase: 'executing'; planId: string; by: string; resumed: boolean }
  | { phase: 'done'; planId: string; by: string }
  | { phase: 'failed'; planId: string; by: string; why: 'steps' | 'unmeasurable' }
  | { phase: 'superseded'; planId: string; by: string; freshPlanId: string };

export type RepairPhase = RepairState['phase'];

export type RepairEvent =
  | { type: 'approve'; by: string }
  | { type: 'reject'; by: string }
  | { type: 'expire' }
  | { type: 'undo-approval'; by: string }
  /** The planner ran again right before the first step: its plan id, and so the world, is the same or not. */
  | { type: 're-measure'; freshPlanId: string }
  | { type: 'unmeasurable' }
  | { type: 'start' }
  /** A run took over a plan whose journal had begun: steps done are not repeated. */
  | { type: 'resume' }
  | { type: 'finish'; allStepsWent: boolean };

export type Transition = { ok: true; state: RepairState } | { ok: false; refused: string };

/** The one function that says what may follow what. Every pair not listed is refused. */
export function transition(state: RepairState, event: RepairEvent): Transition {
  const { planId } = state;
  const to = (next: RepairState): Transition => ({ ok: true, state: next });
  switch (state.phase) {
    case 'stored':
      if (event.type === 'approve') return to({ phase: 'approved', planId, by: event.by });
      if (event.type === 'reject') return to({ phase: 'rejected', planId, by: event.by });
      if (event.type === 'expire') return to({ phase: 'expired', planId });
      break;
    case 'approved':
      if (event.type === 'undo-approval' && event.by === state.by) return to({ phase: 'stored', planId });
      if (event.type === 're-measure') {
        return event.freshPlanId === planId
          ? to({ phase: 're-measured', planId, by: state.by })
          : to({ phase: 'superseded', planId, by: state.by, freshPlanId: event.freshPlanId });
      }
      if (event.type === 'unmeasurable') return to({ phase: 'failed', planId, by: state.by, why: 'unmeasurable' });
      break;
    case 're-measured':
      if (event.type === 'start') return to({ phase: 'executing', planId, by: state.by, resumed: false });
      break;
    case 'executing':
      if (event.type === 'resume') return to({ ...state, resumed: true });
      if (event.type === 'finish') return to(event.allStepsWent ? { phase: 'done', planId, by: state.by } : { phase: 'failed', planId, by: state.by, why: 'steps' });
      break;
    default:
      break;
  }
  return { ok: false, refused: `plan ${planId}: ${event.type} is not possible when the plan is ${state.phase}` };
}

/** Like transition, for a driver that has already checked: a refusal is a bug, thrown. */
export function advance(state: RepairState, event: RepairEvent): RepairState {
  const next = transition(state, event);
  if (!next.ok) throw new Error(next.refused);
  return next.state;
}

/** What the plan store keeps for a state (re-measured is never stored: it lasts one run, in memory). */
export function storedPhase(state: RepairState): PlanState {
  if (state.phase === 'stored') return 'pending';
  if (state.phase === 're-measured') return 'approved';
  return state.phase;
}

/**
 * The state of a plan as the store keeps it. A plan that is `executing` while its journal has not
 * begun was taken by a run that stopped before its first step: nothing ran, so it is approved.
 */
export function stateOf(stored: { plan: { id: string }; state: PlanState; decidedBy?: string }, journalBegun: boolean, approvedBy = ''): RepairState {
  const planId = stored.plan.id;
  const by = stored.decidedBy ?? approvedBy;
  switch (stored.state) {
    case 'pending':
      return { phase: 'stored', planId };
    case 'approved':
      return { phase: 'approved', planId, by };
    case 'rejected':
      return { phase: 'rejected', planId, by };
    case 'expired':
      return { phase: 'expired', planId };
    case 'executing':
      return journalBegun ? { phase: 'executing', planId, by, resumed: false } : { phase: 'approved', planId, by };
    case 'done':
      return { phase: 'done', planId, by };
    case 'failed':
      return { phase: 'failed', planId, by, why: 'steps' };
    case 'superseded':
      return { phase: 'superseded', planId, by, freshPlanId: '' };
  }
}

/** What an execute job does with a plan in this state. */
export type ExecuteStep =
  /** Approved: measure the world again, then run (or refuse). */
  | 're-measure'
  /** Executing with a begun journal: an earlier run stopped mid-plan; go on from the journal. */
  | 'resume'
  /** Done or failed with results: a retry after the run; report it, do not repeat it. */
  | 'report-run'
  /** Anything else (pending, rejected, expired, superseded, or finished without results): not run. */
  | 'refuse';

export function executeStep(state: RepairState, hasResults: boolean): ExecuteStep {
  if (state.phase === 'approved') return 're-measure';
  if (state.phase === 'executing') return 'resume';
  if ((state.phase === 'done' || state.phase === 'failed') && hasResults) return 'report-run';
  return 'refuse';
}
