import type { StepResult } from '../../core/report.ts';
import type { RepairOutcome } from '../metrics.ts';
import type { PlanStep } from './plan-step.ts';

/** What a repair run tells whoever listens: the Slack thread, the audit trail, the metrics, the log. */
export type RepairRunEvent =
  /** A step is about to run (journaled as started; `resumed`: an earlier run may have sent its writes). */
  | { type: 'step-started'; index: number; step: PlanStep; resumed: boolean }
  /** A step ended: verified, failed, refused or skipped; `replayed` when the journal already had it done. */
  | { type: 'step-ended'; index: number; result: StepResult; replayed: boolean }
  /** Every step of one subject ended, and the run still holds the plan. */
  | { type: 'subject-done'; subject: string; results: StepResult[] }
  /** A line while a step waits on something slow (a commissioning, a canary). */
  | { type: 'progress'; text: string }
  /** The plan ended: run (applied or failed), not run (refused, failed), with the steps it ran. */
  | { type: 'run-ended'; outcome: RepairOutcome; steps: readonly StepResult[] };

export type RepairRunEventType = RepairRunEvent['type'];
type Listener<T extends RepairRunEventType> = (event: Extract<RepairRunEvent, { type: T }>) => Promise<void> | void;

/**
 * One typed emitter per run. Listeners run in the order they subscribed, one after another, and
 * an error of one (a lease lost while posting to the thread) stops the run, as a failed write would.
 */
export class RepairEvents {
  readonly #listeners: { type: RepairRunEventType; listener: (event: RepairRunEvent) => Promise<void> | void }[] = [];

  on<T extends RepairRunEventType>(type: T, listener: Listener<T>): this {
    this.#listeners.push({ type, listener: listener as (event: RepairRunEvent) => Promise<void> | void });
    return this;
  }

  async emit(event: RepairRunEvent): Promise<void> {
    for (const { type, listener } of this.#listeners) if (type === event.type) await listener(event);
  }
}
