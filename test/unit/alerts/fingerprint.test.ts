import { describe, expect, it } from 'vitest';
import { evidenceDigest, fingerprintOf } from '../../../src/edge/alerts/fingerprint.ts';

describe('alert fingerprints', () => {
  it('identify a problem by check, target, code and subject', () => {
    expect(fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node1')).toBe(fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node1'));
    expect(fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node1')).not.toBe(fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node2'));
  });

  it('see the same evidence whatever the key order, and a real change as a change', () => {
    expect(evidenceDigest({ a: 1, b: [1, 2] })).toBe(evidenceDigest({ b: [1, 2], a: 1 }));
    expect(evidenceDigest({ live: '52:54:00:00:00:01' })).not.toBe(evidenceDigest({ live: '52:54:00:00:00:02' }));
  });

  it("ignore dig's fresh query id, which changes on every probe of an unchanged resolver", () => {
    const line = (id: number) => ({ status: 'SERVFAIL', statusLine: `;; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: ${id}` });
    expect(evidenceDigest(line(25405))).toBe(evidenceDigest(line(4815)));
    expect(evidenceDigest(line(1))).not.toBe(evidenceDigest({ ...line(1), status: 'NOERROR' }));
  });

  it("ignore the witnesses' ages and a cached answer's TTL left, which move with the clock; not the sighting itself", () => {
    const drift = (age: string, rack = 'site-b-rack') => ({ live: '52:54:00:00:00:01', seenByRack: { rack, lastSeen: '2026-07-24T12:58:30.000Z', age }, lastPxeEvent: { created: 'Tue, 21 Jul. 2026 09:12:31', age } });
    expect(evidenceDigest(drift('3m'))).toBe(evidenceDigest(drift('18m')));
    expect(evidenceDigest(drift('3m'))).not.toBe(evidenceDigest(drift('3m', 'other-rack')));
    expect(evidenceDigest({ served: ['10.0.0.1'], ttlLeft: 298 })).toBe(evidenceDigest({ served: ['10.0.0.1'], ttlLeft: 12 }));
    expect(evidenceDigest({ served: ['10.0.0.1'], ttlLeft: 298 })).not.toBe(evidenceDigest({ served: [], ttlLeft: null }));
  });
});
