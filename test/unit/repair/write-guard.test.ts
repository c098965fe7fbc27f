import { beforeEach, describe, expect, it } from 'vitest';
import { MaasApiError } from '../../../src/adapters/maas/maas-api-error.ts';
import { memoryJournal } from '../../../src/engine/repair/journal.ts';
import { sendOrReadBack } from '../../../src/engine/repair/send-or-read-back.ts';
import { stepWriter, UnprovenWriteError } from '../../../src/engine/repair/write-guard.ts';

// MAAS spends an OAuth nonce only when a request succeeds (piston3 stores it in the request's
// transaction), so a 401 "Nonce already used" means an earlier copy of the request did its work.
const nonceUsed = () =>
  new MaasApiError({ region: 'region-a', status: 401, body: "Authorization Error: 'Nonce already used: 81525418'", method: 'POST', path: 'machines/fc0001/?op=mark_broken' });
const wrongSecret = () =>
  new MaasApiError({ region: 'region-a', status: 401, body: 'Authorization Error: Invalid signature. Expected signature base string: &not-shown', method: 'POST', path: 'machines/fc0001/?op=mark_broken' });

async function journaledState(err: Error) {
  const journal = memoryJournal();
  const writer = stepWriter({ journal, index: 0, entry: undefined, token: 1, at: () => 1 });
  await expect(writer.write('markBroken', () => Promise.reject(err))).rejects.toBe(err);
  return { journal, entry: await journal.get(0) };
}

describe('write guard: what a MAAS 401 proves about a write', () => {
  it('401 Nonce already used is journaled unknown, and a later run does not send the non-idempotent write again', async () => {
    const { entry } = await journaledState(nonceUsed());
    expect(entry?.writes).toEqual([{ name: 'markBroken', run: 1, state: 'unknown' }]);

    const later = stepWriter({ journal: memoryJournal(), index: 0, entry, token: 2, at: () => 2 });
    const sent: string[] = [];
    await expect(later.write('markBroken', async () => void sent.push('markBroken'))).rejects.toBeInstanceOf(UnprovenWriteError);
    expect(sent).toEqual([]);
  });

  it('401 for a wrong token secret is journaled refused (MAAS did nothing), so a later run may send it', async () => {
    const { entry } = await journaledState(wrongSecret());
    expect(entry?.writes).toEqual([{ name: 'markBroken', run: 1, state: 'refused' }]);

    const later = stepWriter({ journal: memoryJournal(), index: 0, entry, token: 2, at: () => 2 });
    const sent: string[] = [];
    await later.write('markBroken', async () => void sent.push('markBroken'));
    expect(sent).toEqual(['markBroken']);
  });
});

describe('sendOrReadBack', () => {
  let reads = 0;
  /** The object read back already holds the target. */
  const holdsTargetCounting = async () => {
    reads += 1;
    return true;
  };
  beforeEach(() => {
    reads = 0;
  });

  it('a 401 Nonce already used is resolved by reading: applied when the object holds the target', async () => {
    const sent = await sendOrReadBack(() => Promise.reject(nonceUsed()), holdsTargetCounting);
    expect(sent.kind).toBe('applied');
    expect(reads).toBe(1);
  });

  it('a refusal is failed without a read', async () => {
    const sent = await sendOrReadBack(() => Promise.reject(wrongSecret()), holdsTargetCounting);
    expect(sent.kind).toBe('failed');
    expect(reads).toBe(0);
  });

  it('an unknown outcome whose read-back fails is failed, with the write\'s own error', async () => {
    const err = nonceUsed();
    const sent = await sendOrReadBack(() => Promise.reject(err), () => Promise.reject(new Error('read failed too')));
    expect(sent).toEqual({ kind: 'failed', error: err });
  });
});
