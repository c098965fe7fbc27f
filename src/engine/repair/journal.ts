import type { StepResult } from '../../core/report.ts';

/**
 * One external write of a step (a MAAS call, an SSH command, a kube patch), journaled before it is
 * sent and again when its answer is known. `run` is the fencing token of the run that sent it.
 * - sending: sent, or about to be, and no answer recorded: its outcome is unproven;
 * - answered: the peer answered success;
 * - refused: the peer answered with a refusal (HTTP 4xx): proof that it took no effect;
 * - unknown: an error without such proof (a timeout, a 5xx, a dropped connection).
 */
export interface WriteRecord {
  name: string;
  run: number;
  state: 'sending' | 'answered' | 'refused' | 'unknown';
}

/**
 * What the executor has done with each step of one plan, by the step's index. Written before a
 * step's first call (`started`), around each of its writes, and after its read-back (`done`), so
 * that a run that takes over resolves a write it cannot prove by reading the world instead of
 * sending it again. `writes` is absent in entries journaled before writes were recorded: such a
 * step may have sent anything.
 */
export type JournalEntry = { state: 'started'; at: number; writes?: WriteRecord[] } | { state: 'done'; at: number; result: StepResult; writes?: WriteRecord[] };

export interface Journal {
  /** True the first time: execution of this plan starts now. False on a resume. */
  begin(): Promise<boolean>;
  hasBegun(): Promise<boolean>;
  get(index: number): Promise<JournalEntry | undefined>;
  /** Under a lease: written only while the lease is this run's (else LeaseLostError, nothing written). */
  set(index: number, entry: JournalEntry): Promise<void>;
  /**
   * Waits, for a bounded time, until a replica holds everything written so far (a journal in a
   * replicated Redis; see journal-replica.ts). Absent where there is nothing to replicate to.
   */
  confirm?(): Promise<ReplicaConfirmation>;
}

/** `no-replica`: the primary has none, so there is nothing to wait for; `unconfirmed`: none acknowledged in time. */
export type ReplicaConfirmation = 'replicated' | 'no-replica' | 'unconfirmed';

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
      entries.set(index, structuredClone(entry));
    },
  };
}
