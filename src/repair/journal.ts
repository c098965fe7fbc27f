import type { StepResult } from '../report.ts';

/**
 * What the executor has done with each step of one plan, by the step's index. Written before a
 * step's first call (`started`) and after its read-back (`done`), so that a worker killed between
 * the two resumes by checking what the call did instead of sending it again.
 */
export type JournalEntry = { state: 'started'; at: number } | { state: 'done'; at: number; result: StepResult };

export interface Journal {
  /** True the first time: execution of this plan starts now. False on a resume. */
  begin(): Promise<boolean>;
  hasBegun(): Promise<boolean>;
  get(index: number): Promise<JournalEntry | undefined>;
  set(index: number, entry: JournalEntry): Promise<void>;
}

/** For the CLI: one process, one run. */
export function memoryJournal(): Journal {
  let begun = false;
  const entries = new Map<number, JournalEntry>();
  return {
    async begin() {
      const first = !begun;
      begun = true;
      return first;
    },
    async hasBegun() {
      return begun;
    },
    async get(index) {
      return entries.get(index);
    },
    async set(index, entry) {
      entries.set(index, entry);
    },
  };
}
