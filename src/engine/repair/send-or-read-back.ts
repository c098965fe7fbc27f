import { oneLine } from '../../core/one-line.ts';
import { isLeaseError } from './plan-lease.ts';
import { isRefusal } from './write-guard.ts';

/**
 * - answered: the peer answered success (the caller still reads back, as always);
 * - applied: no answer that proves anything, but the object read back already holds the target;
 * - failed: refused (proof of no effect), or unknown and the read-back does not show it applied.
 */
export type SentWrite = { kind: 'answered' } | { kind: 'applied' | 'failed'; error: unknown };

/**
 * Sends an idempotent write once and, when it throws without proof that the peer refused it (a
 * lost answer, a timeout, a 5xx, MAAS's 401 "Nonce already used"), reads the object back instead
 * of believing the error: the peer may have applied it. The write is never sent again here.
 * Lease errors are the executor's and pass through.
 */
export async function sendOrReadBack(send: () => Promise<unknown>, holdsTarget: () => Promise<boolean>): Promise<SentWrite> {
  try {
    await send();
    return { kind: 'answered' };
  } catch (error) {
    if (isLeaseError(error)) throw error;
    if (isRefusal(error)) return { kind: 'failed', error };
    const applied = await holdsTarget().catch(() => false);
    return { kind: applied ? 'applied' : 'failed', error };
  }
}

/**
 * The evidence of an `applied` write: the answer was lost, and the read-back showed the change.
 * The error's message only: its hint (check the region, check the key) would be wrong advice here.
 */
export function lostAnswerNote(error: unknown): string {
  const said = error instanceof Error ? error.message : String(error);
  return `read back: it took effect, though its answer was lost (${oneLine(said)}); not sent again`;
}
