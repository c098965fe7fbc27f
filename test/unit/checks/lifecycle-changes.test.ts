import { describe, expect, it } from 'vitest';
import { batchKey, batchTriggers, LifecycleChanges } from '../../../src/features/macs/lifecycle-changes.ts';

const ev = (domain: string, event: string, detail = 'Added') => ({ domain, event, detail });

describe('the changes a VM host watch collects before its mac-diff', () => {
  it('keeps only definitions; an undefined domain waits for its redefinition', () => {
    const changes = new LifecycleChanges();
    expect(changes.add(ev('a', 'Started', 'Booted'))).toBe(false);
    expect(changes.empty).toBe(true);
    changes.add(ev('a', 'Undefined', 'Removed'));
    expect(changes.awaitingRedefinition).toBe(true);
    changes.add(ev('a', 'Defined'));
    expect(changes.awaitingRedefinition).toBe(false);
    changes.add(ev('b', 'Undefined', 'Removed'));
    const batch = changes.take();
    expect(changes.empty).toBe(true);
    expect(batchTriggers('h1', batch)).toEqual([
      'VM host h1: domain "a" undefined and defined again (its NICs may have new MACs)',
      'VM host h1: domain "b" undefined',
    ]);
  });

  it('the key: equal for the same change and the same MACs after it, different for a change back, never shared without them', () => {
    const batch = { domains: [{ domain: 'a', events: ['Undefined', 'Defined'] }] };
    const key = (macs: string | null) => batchKey('site-b', 'h1', batch, macs === null ? null : { a: macs });
    expect(key('52:54:00:00:00:01')).toBe(key('52:54:00:00:00:01'));
    expect(key('52:54:00:00:00:01')).not.toBe(key('52:54:00:00:00:02'));
    expect(batchKey('site-c', 'h1', batch, { a: 'x' })).not.toBe(batchKey('site-b', 'h1', batch, { a: 'x' }));
    expect(key(null)).not.toBe(key(null));
  });
});
