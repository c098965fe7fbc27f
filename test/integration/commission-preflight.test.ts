import { afterEach, describe, expect, it } from 'vitest';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { machine, rackController, randomApiKey, scenario, startMaasSimulator, virshPower, type MaasSimCall, type ScenarioInput } from '../../lab/maas-sim/index.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { commissionPreflight } from '../../src/features/macs/commission-preflight.ts';
import { Secret } from '../../src/core/secret.ts';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import { executePlan } from '../../src/engine/repair/executor.ts';
import { memoryJournal } from '../../src/engine/repair/journal.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { macLabContext } from '../helpers/mac-lab-context.ts';
import type { Report } from '../../src/core/report.ts';

/*
 * fix-macs asks MAAS whether `commission` would be accepted before it plans to break a Failed
 * commissioning machine (canonical/maas 3.4 models/node.py start, clusterrpc/boot_images.py
 * get_common_available_boot_images; recorded 3.4.10 rows commission-from-*). Real MAAS simulator
 * and SSH VM host on loopback; what the operator sees is the plan and its refusals.
 */

const HOST = '127.0.0.1';
let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

const FOCAL = { osystem: 'ubuntu', release: 'focal' };
const focalOn = (arch = 'amd64') => [{ name: 'ubuntu/focal', architecture: arch, subarches: ['generic'] }];
const rackB = { system_id: 'rack01', hostname: 'rack-b' };

/** A Failed commissioning VM and a Ready one, both drifted; `maas` sets the racks and the commissioning release. */
async function labWith(maas: Omit<ScenarioInput, 'machines'>, failArch = 'amd64/generic'): Promise<MacLab> {
  return startMacLab({
    machines: [
      machine({ system_id: 'fc01', hostname: 'fc01-vm', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:00:00:01'], live_boot_mac: '52:54:00:aa:00:01', power: virshPower(HOST, 'dom-fc01'), architecture: failArch }),
      machine({ system_id: 'rd01', hostname: 'rd01-vm', zone: 'site-b', status: 'Ready', macs: ['52:54:00:00:00:02'], power: virshPower(HOST, 'dom-rd01') }),
    ],
    maas,
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'dom-fc01', nics: [{ mac: '52:54:00:aa:00:01' }] }, { name: 'dom-rd01', nics: [{ mac: '52:54:00:aa:00:02' }] }] } }] }],
  });
}

async function plan(l: MacLab, apply = false): Promise<Report> {
  const [report] = await fixMacsJob.run(macLabContext(l), { target: 'site-b', requestedBy: 'terminal:ops', apply, interactive: true });
  return report!;
}

const preflightCalls = (calls: readonly MaasSimCall[]) => calls.filter((c) => c.op === 'get_config' || c.op === 'list_boot_images' || c.path.endsWith('/rackcontrollers/')).map((c) => c.op ?? 'rackcontrollers');
/** What the operator reads for a machine the plan leaves alone: its REPAIR_REFUSED line (plan) or its refused result (after --apply). */
function refusalOf(r: Report, subject: string): { detail: string } | undefined {
  const result = r.results?.find((x) => x.subject === subject && x.outcome === 'refused');
  if (result) return { detail: result.detail };
  const finding = r.findings.find((f) => f.code === 'REPAIR_REFUSED' && f.subject === subject);
  return finding ? { detail: String(finding.evidence.reason) } : undefined;
}

describe('fix-macs: commissioning preflight', () => {
  it('the commissioning release missing on a connected rack: the Failed commissioning machine is refused with why and the step that fixes it; the Ready one is still planned', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: [{ name: 'ubuntu/jammy', architecture: 'amd64', subarches: ['generic'] }] })] });
    const report = await plan(lab);
    expect(report.plan?.steps.map((s) => `${s.subject} ${s.action}`)).toEqual(['rd01-vm set-mac']);
    const refused = refusalOf(report, 'fc01-vm');
    expect(refused?.detail).toMatch(/^Failed commissioning: ubuntu\/focal, MAAS's commissioning release, is not among the boot images of connected rack controller rack-b: .*400 "Ephemeral operating system ubuntu focal is unavailable\."\)\. Marking it broken now would leave it Broken\. To finish: import the boot images/);
    expect(report.verdict).toBe('Plan: update 1 MAC on 1 machine at site-b; 1 machine left alone (see why)');
    // Two config reads, the rack list, one list_boot_images per rack; nothing written.
    expect(preflightCalls(lab.maas.calls).sort()).toEqual(['get_config', 'get_config', 'list_boot_images', 'rackcontrollers']);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('the recorded 3.4.10 region (a registered rack the region cannot reach): refused as "no rack controller is connected"; --apply never sends mark_broken', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, hostname: 'east-rack', connected: false, bootImages: focalOn() })] });
    const report = await plan(lab, true);
    expect(refusalOf(report, 'fc01-vm')?.detail).toMatch(/^Failed commissioning: no rack controller is connected to the region \(east-rack\): .*To finish: reconnect a rack controller \(check that rackd runs on east-rack/);
    expect(lab.maas.calls.filter((c) => c.op === 'mark_broken' || c.op === 'commission')).toEqual([]);
    expect(lab.maas.state.machines.find((m) => m.system_id === 'fc01')?.status).toBe(2);
    expect(report.results?.filter((r) => r.outcome === 'verified').map((r) => r.subject)).toEqual(['rd01-vm']);
  });

  it('every connected rack holds it: the commission step says so, and the repair ends Ready', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: focalOn() }), rackController({ system_id: 'rack02', hostname: 'rack-c', connected: false })] });
    const report = await plan(lab, true);
    const commission = report.plan?.steps.find((s) => s.action === 'commission');
    expect(commission?.detail).toMatch(/MAAS can start it: ubuntu\/focal is on every connected rack \(rack-b\)$/);
    expect(report.results?.every((r) => r.outcome === 'verified')).toBe(true);
    expect(lab.maas.state.machines.find((m) => m.system_id === 'fc01')?.status).toBe(4);
  });

  it('no rack holds the release for the machine\'s architecture: MAAS would accept commission, but the machine could not boot it; refused', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: focalOn('amd64') })] }, 'arm64/generic');
    const report = await plan(lab);
    expect(refusalOf(report, 'fc01-vm')?.detail).toMatch(/^Failed commissioning: MAAS would accept commission, but no connected rack controller holds ubuntu\/focal for arm64 \(only amd64\)/);
  });

  it('list_boot_images refused (403): the preflight cannot tell and says so; the machine is left alone rather than guessed about', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: focalOn() })] });
    lab.maas.injectFaults({ status: 403, count: 1, path: /op=list_boot_images/ });
    const report = await plan(lab);
    expect(refusalOf(report, 'fc01-vm')?.detail).toMatch(/^Failed commissioning: fix-macs could not tell whether MAAS would accept commission \(the racks' boot images could not be read \(MAAS region-a answered 403/);
  });

  it('asked again at mark_broken: images gone while the plan waited for approval → not marked broken, nothing changed, the reason given', async () => {
    lab = await labWith({ commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: focalOn() })] });
    const approved = await fixMacsRepair.plan(macLabContext(lab), 'site-b');
    expect(approved.steps.filter((s) => s.subject === 'fc01-vm').map((s) => s.action)).toEqual(['mark-broken', 'set-mac', 'commission']);
    lab.maas.state.rackControllers[0]!.connected = false;
    const results = await executePlan(approved, { runner: fixMacsRepair.runner(macLabContext(lab), 'site-b'), journal: memoryJournal(), maxSubjects: 50 });
    const markBroken = results.find((r) => r.subject === 'fc01-vm' && r.action === 'mark-broken');
    expect(markBroken).toMatchObject({ outcome: 'refused' });
    expect(markBroken?.detail).toMatch(/^not marked broken, nothing changed: since the plan was made, no rack controller is connected to the region \(rack-b\)/);
    expect(lab.maas.calls.filter((c) => c.op === 'mark_broken' || c.op === 'commission')).toEqual([]);
    expect(lab.maas.state.machines.find((m) => m.system_id === 'fc01')?.status).toBe(2);
  });

  it('a plan with nothing to commission asks MAAS nothing about images', async () => {
    lab = await labWith({ commissioning: FOCAL });
    lab.maas.state.machines.find((m) => m.system_id === 'fc01')!.status = 4;
    await plan(lab);
    expect(preflightCalls(lab.maas.calls)).toEqual([]);
  });
});

describe('commission preflight: what an empty rack list means depends on who asks', () => {
  async function preflightAs(input: ScenarioInput, apiUser: { username: string; is_superuser: boolean } | undefined) {
    const key = randomApiKey();
    const sim = await startMaasSimulator({ scenario: scenario(input), apiKeys: [key] });
    const client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(key, 'test') }, { retries: 0 });
    try {
      return { result: await commissionPreflight(client, apiUser), calls: sim.calls.map((c) => c.op ?? c.path) };
    } finally {
      await client.close();
      await sim.close();
    }
  }

  it('a non-admin key sees an empty rackcontrollers/ (3.4.10 row rackcontrollers, operator): cannot tell, and says why', async () => {
    const { result, calls } = await preflightAs({ userIsAdmin: false, user: 'operator', commissioning: FOCAL, rackControllers: [rackController({ ...rackB, bootImages: focalOn() })] }, { username: 'operator', is_superuser: false });
    expect(result).toEqual({ verdict: 'unknown', reason: "MAAS lists no rack controller, and it lists them to admins only (the API key's user operator is not one), so it cannot tell whether ubuntu/focal is on the racks" });
    expect(calls).not.toContain('list_boot_images');
  });

  it('an admin key and no rack at all: MAAS would refuse commission; connect a rack', async () => {
    const { result } = await preflightAs({ commissioning: FOCAL, rackControllers: [] }, { username: 'admin', is_superuser: true });
    expect(result).toMatchObject({ verdict: 'refused', image: 'ubuntu/focal', reason: expect.stringMatching(/^MAAS has no rack controller, so no boot image: it would refuse commission \(400 "Ephemeral operating system ubuntu focal is unavailable\."\)$/), fix: expect.stringMatching(/^connect a rack controller/) });
  });
});
