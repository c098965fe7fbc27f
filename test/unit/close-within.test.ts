import { describe, expect, it } from 'vitest';
import { closeWithin } from '../../src/main.ts';
import { repeatGate } from '../../src/core/repeat-gate.ts';

describe('closeWithin: the bound on a shutdown', () => {
  it('says closed when the close finishes, and gives up on one that never does', async () => {
    let closes = 0;
    expect(await closeWithin(async () => void closes++, 1_000)).toBe('closed');
    expect(await closeWithin(() => new Promise<void>(() => undefined), 20)).toBe('timeout');
    expect(closes).toBe(1);
  });

  it('stops waiting at a second signal', async () => {
    expect(await closeWithin(() => new Promise<void>(() => undefined), 60_000, Promise.resolve('SIGTERM'))).toBe('interrupted');
  });
});

describe('repeatGate', () => {
  it('lets one report per key through per window and counts the rest', () => {
    let now = 0;
    const gate = repeatGate(10_000, () => now);
    expect(gate('ECONNREFUSED')).toEqual({ pass: true, held: 0 });
    expect(gate('ECONNREFUSED')).toEqual({ pass: false, held: 1 });
    expect(gate('ENOTFOUND')).toEqual({ pass: true, held: 0 });
    now = 9_999;
    expect(gate('ECONNREFUSED')).toEqual({ pass: false, held: 2 });
    now = 10_000;
    expect(gate('ECONNREFUSED')).toEqual({ pass: true, held: 2 });
  });
});
