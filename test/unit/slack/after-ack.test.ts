import { describe, expect, it } from 'vitest';
import { afterAckQueue } from '../../../src/edge/slack/after-ack.ts';

describe('afterAckQueue', () => {
  it('lets `concurrency` callers run at once and the rest in arrival order', async () => {
    const q = afterAckQueue(2);
    const order: number[] = [];
    const releases = await Promise.all([q.turn(), q.turn()]);
    expect(q.active).toBe(2);
    const later = [3, 4, 5].map((n) => q.turn().then((release) => (order.push(n), release)));
    expect(q.waiting).toBe(3);
    releases[0]!();
    releases[0]!(); // a second call of the same release frees nothing more
    const third = await later[0]!;
    expect(order).toEqual([3]);
    expect(q.waiting).toBe(2);
    releases[1]!();
    third();
    const rest = await Promise.all(later.slice(1));
    expect(order).toEqual([3, 4, 5]);
    for (const r of rest) r();
    expect(q.active).toBe(0);
    expect(q.waiting).toBe(0);
  });
});
