import type { Journal, JournalEntry, WriteRecord } from './journal.ts';
import { REPLICA_CONFIRM_MS } from './journal-replica.ts';

export interface WriteOptions {
  /**
   * Sending it twice leaves the world as sending it once, and its effect can be read back (an
   * interface, DNS record or subnet PUT, mark_fixed, an annotation patch). Default false: a write
   * nobody declared idempotent (mark_broken, commission, rack.forwarderInstall, any new one) is
   * never sent again after an earlier run sent it without a provable outcome.
   */
  idempotent?: boolean;
}

/** The one guard in front of every external write of a repair step. */
export type WriteGuard = <T>(name: string, send: () => Promise<T>, options?: WriteOptions) => Promise<T>;

/** Set by the executor while a step runs; read by the fenced adapters (fenced-adapters.ts). */
export interface WriteRoute {
  current?: WriteGuard | undefined;
}

/** A write an earlier run sent and nobody can prove the outcome of: not sent a second time. */
export class UnprovenWriteError extends Error {
  constructor(name: string) {
    super(`${name} was sent by an earlier run that stopped before its answer was recorded, and what is read now does not show it took effect; it is not sent a second time: check by hand, then plan again`);
    this.name = 'UnprovenWriteError';
  }
}

/** A write not sent because no replica confirmed its `sending` mark in time (journal-replica.ts). */
export class UnreplicatedMarkError extends Error {
  constructor(name: string) {
    super(`${name} was not sent: the journal's note that it is being sent reached no Redis replica within ${REPLICA_CONFIRM_MS / 1000} s, and a failover now could lose that note (a later run would then send it a second time); check the replica's link (INFO replication on the primary), then plan again`);
    this.name = 'UnreplicatedMarkError';
  }
}

/**
 * The write guard of one step. Each write is journaled `sending` before it is sent, in the same
 * atomic Redis step that checks the lease (the journal is fenced), and the mark is on a replica
 * (when the primary has one) before the write goes out; then it is journaled with its outcome.
 * A lost lease throws LeaseLostError before anything is sent. A write nobody declared idempotent
 * whose mark no replica confirmed in time is not sent; an idempotent one may be sent again
 * safely, so it goes out anyway.
 */
export function stepWriter(options: { journal: Journal; index: number; entry: JournalEntry | undefined; token: number; at: () => number }) {
  const { journal, index, token } = options;
  const earlier = options.entry?.writes;
  // Journaled by a version that did not record writes: anything may have been sent.
  const unrecorded = options.entry !== undefined && earlier === undefined;
  const writes: WriteRecord[] = [...(earlier ?? [])];
  const startedAt = options.at();
  const entry = (): JournalEntry => ({ state: 'started', at: startedAt, writes: writes.map((w) => ({ ...w })) });

  const write: WriteGuard = async (name, send, writeOptions = {}) => {
    if (!writeOptions.idempotent && (unrecorded || writes.some((w) => w.name === name && w.run !== token && w.state !== 'refused'))) {
      throw new UnprovenWriteError(name);
    }
    const record: WriteRecord = { name, run: token, state: 'sending' };
    writes.push(record);
    await journal.set(index, entry());
    if ((await journal.confirm?.()) === 'unconfirmed' && !writeOptions.idempotent) {
      writes.pop();
      await journal.set(index, entry());
      throw new UnreplicatedMarkError(name);
    }
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      answer = await send();
    } catch (err) {
      record.state = isRefusal(err) ? 'refused' : 'unknown';
      await journal.set(index, entry());
      throw err;
    }
    record.state = 'answered';
    await journal.set(index, entry());
    return answer;
  };

  return {
    write,
    entry,
    /** An earlier run may have sent a write of this step: the runner reads what it did before acting. */
    resumed: unrecorded || (earlier?.length ?? 0) > 0,
  };
}

/**
 * An HTTP 4xx answer: the peer refused, so the write took no effect. A peer error that knows
 * better says so (`provesNoEffect`: MAAS's 401 "Nonce already used" means an earlier copy ran).
 * Anything else (a 5xx, a reset, a timeout, no status at all) leaves the outcome unknown.
 */
export function isRefusal(err: unknown): boolean {
  const e = err as { status?: unknown; provesNoEffect?: unknown } | null;
  if (typeof e?.provesNoEffect === 'boolean') return e.provesNoEffect;
  const status = e?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
