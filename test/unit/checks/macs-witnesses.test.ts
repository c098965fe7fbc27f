import { describe, expect, it } from 'vitest';
import { age, applyWitnesses, driftedSystemIds, eventLimitFor, eventTime, type DriftWitnesses } from '../../../src/features/macs/witnesses.ts';
import type { MaasDiscovery, MaasEvent, MaasEventPage } from '../../../src/adapters/maas/types.ts';
import type { Finding } from '../../../src/core/report.ts';

const NOW = new Date('2026-07-24T13:00:00Z');

function drift(systemId: string, live: string): Finding {
  return {
    code: 'MAC_DRIFT',
    severity: 'critical',
    subject: `${systemId}-vm`,
    summary: `${systemId}-vm (Failed commissioning): MAAS records eth0 as 52:54:00:00:00:01, the live domain has ${live}`,
    evidence: { systemId, hostname: `${systemId}-vm`, interface: 'eth0', recorded: '52:54:00:00:00:01', live },
  };
}

const summaryFinding: Finding = { code: 'MAC_SUMMARY', severity: 'info', subject: 'site-b', summary: 'table', evidence: {} };

function seen(mac: string, lastSeen = '2026-07-24T12:58:30.000Z'): MaasDiscovery {
  return {
    discovery_id: 'x',
    ip: '10.20.0.57',
    mac_address: mac,
    last_seen: lastSeen,
    hostname: null,
    fabric_name: 'fabric-1',
    vid: 0,
    observer: { system_id: 'rack01', hostname: 'rack-b', interface_id: 7, interface_name: 'br-pxe' },
  };
}

function event(id: number, node: string, type: string, created: string): MaasEvent {
  return { id, node, hostname: `${node}-vm`, level: 'INFO', created, type, description: '' };
}

function page(events: MaasEvent[], prev: string | null = '/MAAS/api/2.0/events/?op=query&before=1'): MaasEventPage {
  return { count: events.length, events, next_uri: '/MAAS/api/2.0/events/?op=query&after=9', prev_uri: events.length ? prev : null };
}

function witnesses(over: Partial<DriftWitnesses> = {}): DriftWitnesses {
  return { discovery: { ok: true, value: [] }, events: { ok: true, value: page([]) }, eventLimit: 100, now: NOW, ...over };
}

describe('MAAS witnesses of MAC drift', () => {
  const findings = [drift('aa01', '52:54:00:7f:00:01'), summaryFinding];

  it('cites the rack that saw the live MAC as an unknown neighbour, with when and on which interface', () => {
    const out = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: true, value: [seen('52:54:00:7F:00:01'), seen('52:54:00:99:99:99')] }, events: { ok: true, value: page([event(5, 'aa01', 'Performing PXE boot', 'Tue, 21 Jul. 2026 09:12:31')]) } }));
    const f = out[0]!;
    expect(f.evidence).toMatchObject({ seenByRack: 'rack-b', seenOnInterface: 'br-pxe', seenAt: '2026-07-24T12:58:30.000Z', seenIp: '10.20.0.57', discoveryId: 'x' });
    expect(f.summary).toContain('rack rack-b saw 52:54:00:7f:00:01 on br-pxe as an unknown neighbour, last 2026-07-24 12:58:30 UTC (1m ago)');
    expect(f.summary).toMatch(/; no PXE event since 2026-07-21 09:12:31 UTC \(3d 3h ago\)$/);
    expect(f.evidence).toMatchObject({ lastPxeEvent: 'Tue, 21 Jul. 2026 09:12:31', lastBootEvent: 'Performing PXE boot', lastBootEventAt: 'Tue, 21 Jul. 2026 09:12:31' });
    expect(out).toHaveLength(2);
    expect(out[1]).toBe(summaryFinding);
  });

  it('a commissioning event newer than the last PXE boot is named too', () => {
    const events = [event(9, 'aa01', 'Failed commissioning', 'Fri, 24 Jul. 2026 10:00:00'), event(5, 'aa01', 'Performing PXE boot', 'Tue, 21 Jul. 2026 09:12:31')];
    const f = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: true, value: [seen('52:54:00:aa:aa:aa')] }, events: { ok: true, value: page(events) } }))[0]!;
    expect(f.summary).toContain('; no PXE event since 2026-07-21 09:12:31 UTC (3d 3h ago); last: Failed commissioning 2026-07-24 10:00:00 UTC (3h 0m ago)');
  });

  it('only a commissioning event: no PXE event, and the commissioning named', () => {
    const f = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: true, value: [seen('52:54:00:aa:aa:aa')] }, events: { ok: true, value: page([event(9, 'aa01', 'Commissioning', 'Fri, 24 Jul. 2026 10:00:00')]) } }))[0]!;
    expect(f.summary).toContain("; no PXE event in MAAS's event log; last: Commissioning 2026-07-24 10:00:00 UTC (3h 0m ago)");
    expect(f.evidence.lastPxeEvent).toBeNull();
  });

  it('discovery disabled (nothing listed at all, known or not): one info line, the drift finding unchanged in severity', () => {
    const out = applyWitnesses(findings, 'site-b', witnesses({ discoveryTotal: { ok: true, value: 0 }, events: { ok: true, value: page([event(5, 'aa01', 'Commissioning', 'Fri, 24 Jul. 2026 10:00:00')]) } }));
    const info = out.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE');
    expect(info).toHaveLength(1);
    expect(info[0]!.severity).toBe('info');
    expect(info[0]!.summary).toMatch(/^MAAS network discovery lists no neighbour at all: network discovery is probably disabled/);
    expect(out[0]!.severity).toBe('critical');
    expect(out[0]!.evidence.seenByRack).toBeNull();
  });

  it('no unknown neighbour but discovery/ has rows (every MAC seen is known): discovery is on, no rack saw the live MAC, no info line about it', () => {
    const events = { ok: true as const, value: page([event(5, 'aa01', 'Commissioning', 'Fri, 24 Jul. 2026 10:00:00')]) };
    const out = applyWitnesses(findings, 'site-b', witnesses({ discoveryTotal: { ok: true, value: 2 }, events }));
    expect(out.some((f) => f.code === 'MAC_WITNESS_UNAVAILABLE')).toBe(false);
    expect(out[0]!.summary).toContain('no rack saw 52:54:00:7f:00:01 (network discovery lists 2 neighbours, every one with a MAC MAAS knows)');
    expect(out[0]!.evidence).toMatchObject({ seenByRack: null, discoveryNeighbours: 2 });
  });

  it('no unknown neighbour and discovery/ unreadable: says it cannot tell, not that discovery is disabled', () => {
    const out = applyWitnesses(findings, 'site-b', witnesses({ discoveryTotal: { ok: false, reason: 'MAAS answered 500' } }));
    const info = out.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE');
    expect(info[0]!.summary).toMatch(/^MAAS network discovery lists no unknown neighbour, and its full list could not be read \(MAAS answered 500\) to tell whether discovery is on/);
    expect(info[0]!.summary).not.toMatch(/disabled/);
  });

  it('a key that cannot read discovery or events: one info line naming both, the verdict untouched', () => {
    const out = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: false, reason: 'MAAS answered 403' }, events: { ok: false, reason: 'MAAS answered 403' } }));
    const info = out.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE');
    expect(info).toHaveLength(1);
    expect(info[0]!.summary).toBe("MAAS network discovery could not be read (MAAS answered 403); MAAS's event log could not be read (MAAS answered 403). The drift verdict stands on the VM hosts' evidence.");
    expect(out[0]!.summary).toBe(findings[0]!.summary);
    expect(out[0]!.evidence).not.toHaveProperty('seenByRack');
  });

  it('events empty: one line, and the finding says there is no PXE or commissioning event at all', () => {
    const out = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: true, value: [seen('52:54:00:aa:aa:aa')] } }));
    expect(out[0]!.summary).toContain("no PXE or commissioning event in MAAS's event log");
    expect(out.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE').map((f) => f.summary)).toEqual([
      "MAAS's event log holds no event for the 1 drifted machine. The drift verdict stands on the VM hosts' evidence.",
    ]);
  });

  it('events paginated (a full page, older ones exist) without a boot event: says only the newest page was read', () => {
    const flood = Array.from({ length: 100 }, (_, i) => event(1000 - i, 'aa01', 'Node powered off', 'Fri, 24 Jul. 2026 12:00:00'));
    const out = applyWitnesses(findings, 'site-b', witnesses({ discovery: { ok: true, value: [seen('52:54:00:aa:aa:aa')] }, events: { ok: true, value: page(flood) } }));
    expect(out[0]!.summary).toContain('no PXE or commissioning event among the newest 100 events');
    expect(out.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE').map((f) => f.summary)).toEqual([
      "the newest 100 events (one page; older pages not read) hold no PXE or commissioning event for 1 drifted machine(s). The drift verdict stands on the VM hosts' evidence.",
    ]);
  });

  it('no drift: nothing is asked and nothing added', () => {
    expect(driftedSystemIds([summaryFinding])).toEqual([]);
    expect(driftedSystemIds([drift('a', '52:54:00:00:00:09'), { ...drift('a', '52:54:00:00:00:0a') }, drift('b', '52:54:00:00:00:0b')])).toEqual(['a', 'b']);
  });

  it('one events request bounded by MAAS\'s cap of 1000', () => {
    expect(eventLimitFor(1)).toBe(100);
    expect(eventLimitFor(10)).toBe(250);
    expect(eventLimitFor(400)).toBe(1000);
  });

  it('reads MAAS\'s event time format and prints coarse ages', () => {
    expect(new Date(eventTime('Tue, 21 Jul. 2026 09:12:31')).toISOString()).toBe('2026-07-21T09:12:31.000Z');
    expect(eventTime('yesterday')).toBeNaN();
    expect(age(NOW.getTime() - 45_000, NOW)).toBe('45s');
    expect(age(NOW.getTime() - 3 * 3600_000 - 5 * 60_000, NOW)).toBe('3h 5m');
  });
});
