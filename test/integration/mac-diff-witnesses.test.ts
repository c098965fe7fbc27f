import { checkJob } from '../../jobs/check-job.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import { discovery, machine, nodeEvent, rackController, virshPower } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Report } from '../../src/core/report.ts';

const macDiffJob = checkJob(macDiffCheck);

/*
 * mac-diff's witnesses end to end: the MAAS simulator serves network discovery and the event log
 * as MAAS does, a VM host's virsh gives the live MACs; the report cites both witnesses, and one
 * request each is all it costs.
 */

const HOST = '127.0.0.1';
const rack = { system_id: 'rack01', hostname: 'rack-b' };
let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

async function run(maas: NonNullable<Parameters<typeof startMacLab>[0]['maas']>, before?: (l: MacLab) => void): Promise<Report> {
  lab = await startMacLab({
    machines: [
      machine({ system_id: 'd1', hostname: 'drifted-1', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:00:00:01'], power: virshPower(HOST, 'dom-1') }),
      machine({ system_id: 'ok1', hostname: 'fine-1', zone: 'site-b', macs: ['52:54:00:00:00:02'], power: virshPower(HOST, 'dom-2') }),
    ],
    maas: { rackControllers: [rackController({ ...rack, macs: ['52:54:00:aa:00:01'] })], ...maas },
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'dom-1', nics: [{ mac: '52:54:00:7f:00:01' }] }, { name: 'dom-2', nics: [{ mac: '52:54:00:00:00:02' }] }] } }] }],
  });
  before?.(lab);
  const [report] = await macDiffJob.run({ config: lab.config, adapters: lab.adapters, log: silentLogger() }, { target: 'site-b' });
  return report!;
}

describe('mac-diff cites MAAS\'s witnesses of the drift', () => {
  it('the rack that saw the live MAC, and the last PXE event; one discovery and one events request', async () => {
    const report = await run({
      discoveries: [discovery({ mac: '52:54:00:7f:00:01', ip: '10.20.0.57', rack, rackInterface: 'br-pxe', lastSeen: new Date(Date.now() - 120_000) })],
      events: [nodeEvent({ id: 1, node: { system_id: 'd1', hostname: 'drifted-1' }, type: 'Performing PXE boot', created: '2026-07-21T09:12:31Z' })],
    });
    const drift = report.findings.find((f) => f.code === 'MAC_DRIFT')!;
    expect(drift.summary).toMatch(/rack rack-b saw 52:54:00:7f:00:01 on br-pxe as an unknown neighbour, last .* UTC \(2m ago\)/);
    expect(drift.summary).toContain('no PXE event since 2026-07-21 09:12:31 UTC');
    expect(drift.evidence).toMatchObject({ seenByRack: 'rack-b', seenOnInterface: 'br-pxe', seenIp: '10.20.0.57', lastPxeEvent: 'Tue, 21 Jul. 2026 09:12:31' });
    expect(report.findings.some((f) => f.code === 'MAC_WITNESS_UNAVAILABLE')).toBe(false);
    expect(report.status).toBe('critical');
    const witnessCalls = lab!.maas.calls.filter((c) => c.path.endsWith('/discovery/') || c.path.endsWith('/events/'));
    expect(witnessCalls.map((c) => c.op)).toEqual(expect.arrayContaining(['by_unknown_mac', 'query']));
    expect(witnessCalls).toHaveLength(2);
    expect(witnessCalls.find((c) => c.op === 'query')?.query.id).toEqual(['d1']);
  });

  it('discovery disabled and no events: one info line, the verdict unchanged', async () => {
    const report = await run({});
    expect(report.findings.filter((f) => f.code === 'MAC_DRIFT')).toHaveLength(1);
    const info = report.findings.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE');
    expect(info).toHaveLength(1);
    expect(info[0]!.summary).toMatch(/network discovery lists no neighbour at all: network discovery is probably disabled.*event log holds no event for the 1 drifted machine/);
    expect(report.verdict).toMatch(/drift/i);
    // by_unknown_mac was empty, so discovery/ was read once to tell "off" from "every MAC known".
    const discoveryCalls = lab!.maas.calls.filter((c) => c.path.endsWith('/discovery/'));
    expect(discoveryCalls.map((c) => c.op ?? 'list')).toEqual(['by_unknown_mac', 'list']);
  });

  it('every MAC the racks saw is known (3.4.10 rows discovery, discovery-unknown): discovery is on, not "probably disabled"', async () => {
    // The racks saw only MACs MAAS records (fine-1's and the rack's own): by_unknown_mac is empty, discovery/ is not.
    const report = await run({
      discoveries: [
        discovery({ mac: '52:54:00:00:00:02', ip: '10.20.0.58', rack, rackInterface: 'br-pxe', lastSeen: new Date(Date.now() - 60_000) }),
        discovery({ mac: '52:54:00:aa:00:01', ip: '10.20.0.2', rack, rackInterface: 'br-pxe', lastSeen: new Date(Date.now() - 60_000) }),
      ],
    });
    const text = report.findings.map((f) => f.summary).join('\n');
    expect(text).not.toMatch(/probably disabled/);
    const drift = report.findings.find((f) => f.code === 'MAC_DRIFT')!;
    expect(drift.summary).toContain('no rack saw 52:54:00:7f:00:01 (network discovery lists 2 neighbours, every one with a MAC MAAS knows)');
    expect(drift.evidence).toMatchObject({ seenByRack: null, discoveryNeighbours: 2 });
    expect(lab!.maas.calls.filter((c) => c.path.endsWith('/discovery/'))).toHaveLength(2);
  });

  it('a key that may not read discovery or events (403): one info line, the drift verdict still critical', async () => {
    const report = await run({}, (l) => l.maas.injectFaults({ status: 403, count: 2, path: /\/(discovery|events)\// }));
    const info = report.findings.filter((f) => f.code === 'MAC_WITNESS_UNAVAILABLE');
    expect(info).toHaveLength(1);
    expect(info[0]!.summary).toMatch(/^MAAS network discovery could not be read \(MAAS .* answered 403.*; MAAS's event log could not be read \(MAAS .* answered 403/);
    expect(report.status).toBe('critical');
    expect(report.findings.find((f) => f.code === 'MAC_DRIFT')?.evidence).not.toHaveProperty('seenByRack');
  });
});
