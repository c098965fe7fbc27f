import { describe, expect, it } from 'vitest';
import type { AlertRecord } from '../../../src/edge/alerts/alert-record.ts';
import { alertIdOf, evidenceDigest, fingerprintOf } from '../../../src/edge/alerts/fingerprint.ts';
import { observeScan } from '../../../src/edge/alerts/observe-scan.ts';
import { transition, type Transition } from '../../../src/edge/alerts/transition.ts';
import { finishReport, probeFailed, type Finding, type Report } from '../../../src/core/report.ts';

const drift = (host: string, live = 'bb'): Finding => ({
  code: 'MAC_DRIFT',
  severity: 'critical',
  subject: host,
  summary: `${host}: MAAS records aa, the VM has ${live}`,
  evidence: { hostname: host, recorded: 'aa', live },
});
const report = (findings: Finding[]): Report => finishReport({ kind: 'mac-diff', target: 'site-b', verdict: `${findings.length} drifted`, findings }, new Date(0));
const QUIET = 600_000;

function step(prev: AlertRecord | undefined, findings: Finding[], now: number, kind: 'drift' | 'unchecked' = 'drift'): Transition {
  const seen = observeScan('mac-diff', 'site-b', [report(findings)]);
  return transition(prev, seen[kind], { check: 'mac-diff', target: 'site-b', now, quietMs: QUIET, partial: seen.partial });
}

describe('fingerprints', () => {
  it('differ by check, target, code and subject, and are stable', () => {
    const base = fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node-1');
    expect(fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node-1')).toBe(base);
    expect(new Set([base, fingerprintOf('mac-diff', 'site-c', 'MAC_DRIFT', 'node-1'), fingerprintOf('mac-diff', 'site-b', 'MAC_IN_USE', 'node-1'), fingerprintOf('mac-diff', 'site-b', 'MAC_DRIFT', 'node-2'), fingerprintOf('dns-check', 'site-b', 'MAC_DRIFT', 'node-1')]).size).toBe(5);
  });

  it('do not run fields together: ("a:b","c") is not ("a","b:c")', () => {
    expect(fingerprintOf('x', 'a:b', 'c', 'd')).not.toBe(fingerprintOf('x', 'a', 'b:c', 'd'));
  });

  it('hash evidence regardless of key order', () => {
    expect(evidenceDigest({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(evidenceDigest({ b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(evidenceDigest({ a: 1 })).not.toBe(evidenceDigest({ a: 2 }));
  });

  it('give drift and could-not-check their own alert ids', () => {
    expect(alertIdOf('mac-diff', 'site-b', 'drift')).not.toBe(alertIdOf('mac-diff', 'site-b', 'unchecked'));
  });
});

describe('observeScan', () => {
  it('splits drift from could-not-check and ignores info', () => {
    const info: Finding = { code: 'MAC_NOT_VIRSH', severity: 'info', subject: 'n9', summary: 'not virsh', evidence: {} };
    const unreachable: Finding = { code: 'MAC_HOST_UNREACHABLE', severity: 'error', subject: '172.16.1.28', summary: 'host down', evidence: {} };
    const seen = observeScan('mac-diff', 'site-b', [report([drift('n1'), info, unreachable])]);
    expect(seen.drift.findings.map((f) => f.subject)).toEqual(['n1']);
    expect(seen.unchecked.findings.map((f) => f.code)).toEqual(['MAC_HOST_UNREACHABLE']);
    expect(seen.partial).toBe(true);
    expect(seen.unchecked.verdict).toMatch(/^Could not check all of site-b \(mac-diff\): host down/);
  });

  it('says a whole target could not be checked', () => {
    const seen = observeScan('mac-diff', 'site-b', [report([probeFailed('site-b', 'MAAS answered 401')])]);
    expect(seen.unchecked.verdict).toBe('Could not check site-b (mac-diff): Could not check site-b: MAAS answered 401');
    expect(seen.drift.findings).toEqual([]);
  });
});

describe('transition', () => {
  it('opens once, then stays unchanged while the same drift lasts', () => {
    const opened = step(undefined, [drift('n1'), drift('n2')], 1000);
    expect(opened.event).toBe('opened');
    expect(opened.record?.members).toHaveLength(2);
    const again = step(opened.record, [drift('n2'), drift('n1')], 2000);
    expect(again.event).toBe('unchanged');
    expect(again.record?.openedAt).toBe(1000);
    expect(again.record?.lastSeenAt).toBe(2000);
  });

  it('notes a new member, a fixed one and changed evidence', () => {
    const opened = step(undefined, [drift('n1'), drift('n2')], 1000).record;
    const t = step(opened, [drift('n1', 'cc'), drift('n3')], 2000);
    expect(t.event).toBe('changed');
    expect(t.change.added.map((m) => m.subject)).toEqual(['n3']);
    expect(t.change.removed.map((m) => m.subject)).toEqual(['n2']);
    expect(t.change.changed.map((m) => m.subject)).toEqual(['n1']);
    expect(t.record?.members.find((m) => m.subject === 'n1')?.since).toBe(1000);
  });

  it('resolves when the drift is gone, and re-opens within the quiet period', () => {
    const opened = step(undefined, [drift('n1')], 1000).record;
    const resolved = step(opened, [], 5000);
    expect(resolved.event).toBe('resolved');
    expect(resolved.record).toMatchObject({ state: 'resolved', resolvedAt: 5000, openedAt: 1000 });
    const back = step(resolved.record, [drift('n1')], 5000 + QUIET);
    expect(back.event).toBe('reopened');
    expect(back.record).toMatchObject({ state: 'open', reopened: 1, lastResolvedAt: 5000, openedAt: 1000 });
    expect(back.record?.resolvedAt).toBeUndefined();
  });

  it('opens a new alert when it comes back after the quiet period', () => {
    const opened = step(undefined, [drift('n1')], 1000).record;
    const resolved = step(opened, [], 5000).record;
    const later = step(resolved, [drift('n1')], 5000 + QUIET + 1);
    expect(later.event).toBe('opened');
    expect(later.record).toMatchObject({ openedAt: 5000 + QUIET + 1, reopened: 0 });
  });

  it('does not resolve drift it could not look at', () => {
    const opened = step(undefined, [drift('n1'), drift('n2')], 1000).record;
    const blind = step(opened, [probeFailed('site-b', 'MAAS down')], 2000);
    expect(blind.event).toBe('none');
    const partial = step(opened, [drift('n1'), { code: 'MAC_HOST_UNREACHABLE', severity: 'error', subject: 'h2', summary: 'h2 down', evidence: {} }], 3000);
    expect(partial.event).toBe('unchanged');
    expect(partial.record?.members.map((m) => m.subject).sort()).toEqual(['n1', 'n2']);
    expect(partial.record?.findings.map((f) => f.subject).sort()).toEqual(['n1', 'n2']);
  });

  it('keeps could-not-check apart, and ignores its changing reason', () => {
    const t1 = step(undefined, [probeFailed('site-b', 'timeout after 5003 ms')], 1000, 'unchecked');
    expect(t1.event).toBe('opened');
    const t2 = step(t1.record, [probeFailed('site-b', 'timeout after 5011 ms')], 2000, 'unchecked');
    expect(t2.event).toBe('unchanged');
    expect(step(t2.record, [drift('n1')], 3000, 'unchecked').event).toBe('resolved');
  });

  it('does nothing for a healthy target with no alert', () => {
    expect(step(undefined, [], 1000)).toMatchObject({ event: 'none', record: undefined });
  });
});
