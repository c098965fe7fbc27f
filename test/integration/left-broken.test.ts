import { afterEach, describe, expect, it } from 'vitest';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { checkJob } from '../../jobs/check-job.ts';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import { machine, nodeEvent, rackController, virshPower, type ScenarioInput } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { macLabContext } from '../helpers/mac-lab-context.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import type { Report } from '../../src/core/report.ts';

/*
 * A machine a fix-macs plan marked broken, whose commission MAAS then refused (3.4.10 rows
 * commission-from-broken: 400 "Ephemeral operating system ubuntu focal is unavailable."), stays
 * Broken. Every later mac-diff and fix-macs names it (MAC_LEFT_BROKEN) and fix-macs plans the
 * commissioning that finishes it. On 3.4 the machine JSON has no error_description, so the plan's
 * mark is read from the DEBUG event "User marking node broken" (models/node.py mark_broken).
 * Real MAAS simulator and SSH VM host on loopback.
 */

const HOST = '127.0.0.1';
const macDiffJob = checkJob(macDiffCheck);
let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

const FOCAL = { osystem: 'ubuntu', release: 'focal' };
const EPHEMERAL_400 = { status: 400, body: 'Ephemeral operating system ubuntu focal is unavailable.', count: 1, path: /op=commission/ };

async function labWith(maas: Omit<ScenarioInput, 'machines'>, extra: Parameters<typeof machine>[0][] = []): Promise<MacLab> {
  return startMacLab({
    machines: [
      machine({ system_id: 'fc01', hostname: 'fc01-vm', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:00:00:01'], live_boot_mac: '52:54:00:aa:00:01', power: virshPower(HOST, 'dom-fc01') }),
      ...extra.map((m) => machine(m)),
    ],
    maas: { commissioning: FOCAL, rackControllers: [rackController({ system_id: 'rack01', hostname: 'rack-b' })], ...maas },
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'dom-fc01', nics: [{ mac: '52:54:00:aa:00:01' }] }, ...extra.map((m) => ({ name: `dom-${m.system_id}`, nics: [{ mac: m.macs?.[0] ?? '' }] }))] } }] }],
  });
}

const fixMacs = async (l: MacLab, apply: boolean): Promise<Report> => (await fixMacsJob.run(macLabContext(l), { target: 'site-b', requestedBy: 'terminal:ops', apply, interactive: true }))[0]!;
const macDiff = async (l: MacLab): Promise<Report> => (await macDiffJob.run(macLabContext(l), { target: 'site-b' }))[0]!;
const statusOf = (l: MacLab, id: string) => l.maas.state.machines.find((m) => m.system_id === id)?.status;

/** The first plan: mark_broken and the MAC go through, then MAAS refuses commission as the recorded region did. */
async function leaveBroken(l: MacLab): Promise<Report> {
  l.maas.injectFaults(EPHEMERAL_400);
  const report = await fixMacs(l, true);
  expect(statusOf(l, 'fc01')).toBe(NODE_STATUS.BROKEN);
  return report;
}

describe('a machine a plan left Broken (MAC_LEFT_BROKEN)', () => {
  it('3.4: the failed commission says what happens next; mac-diff reports the machine from the event log; fix-macs plans just the commissioning, which finishes it', async () => {
    lab = await labWith({ version: '3.4.10' });
    const first = await leaveBroken(lab);
    expect(first.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['mark-broken verified', 'set-mac verified', 'commission failed']);
    expect(first.results?.[2]?.detail).toMatch(/^commission: .*Ephemeral operating system ubuntu focal is unavailable\..*; the machine is still Broken, and mac-diff and fix-macs report it as MAC_LEFT_BROKEN until it is commissioned: .*run fix-macs again \(it plans just the commissioning\)/);
    // A 400 is MAAS's considered answer: commission is not sent again.
    expect(lab.maas.calls.filter((c) => c.op === 'commission')).toHaveLength(1);
    const planId = first.plan!.id;

    lab.maas.resetCalls();
    const diff = await macDiff(lab);
    const left = diff.findings.filter((f) => f.code === 'MAC_LEFT_BROKEN');
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ severity: 'critical', subject: 'fc01-vm', evidence: { systemId: 'fc01', planId, source: 'event log', markedBy: 'admin' } });
    expect(left[0]!.summary).toMatch(new RegExp(`^fc01-vm is Broken: maas-chatops plan ${planId} marked it broken on \\w{3}, \\d{2} \\w{3}\\. \\d{4} [\\d:]+ to update its MAC, and it was not commissioned after`));
    expect(left[0]!.fix).toMatch(/^\/maas fix-macs site-b: plans its commissioning/);
    expect(diff.verdict).toBe('All 1 machines at site-b match their live MACs; 1 left Broken by a fix-macs plan (not commissioned after)');
    expect(diff.status).toBe('critical');
    // One DEBUG events request for the Broken machine, nothing more.
    const events = lab.maas.calls.filter((c) => c.op === 'query');
    expect(events.map((c) => ({ id: c.query.id, level: c.query.level }))).toEqual([{ id: ['fc01'], level: ['DEBUG'] }]);

    const plan = await fixMacs(lab, false);
    expect(plan.plan?.steps.map((s) => `${s.subject} ${s.action}`)).toEqual(['fc01-vm commission']);
    expect(plan.plan?.steps[0]?.detail).toMatch(new RegExp(`^Broken since maas-chatops plan ${planId} \\(MAAS did not commission it then\\) → commissioning, followed until Ready or failed; MAAS can start it: ubuntu/focal is on every connected rack \\(rack-b\\)$`));
    expect(plan.verdict).toBe('Plan: commission 1 machine an earlier plan left Broken at site-b');

    const done = await fixMacs(lab, true);
    expect(done.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['commission verified']);
    expect(statusOf(lab, 'fc01')).toBe(NODE_STATUS.READY);
    expect(lab.maas.calls.filter((c) => c.op === 'mark_broken' || c.op === 'mark_fixed')).toHaveLength(0);
    expect((await macDiff(lab)).findings.some((f) => f.code === 'MAC_LEFT_BROKEN')).toBe(false);
  });

  it('3.5: read from the machine\'s error_description, without asking the event log', async () => {
    lab = await labWith({ version: '3.5.0' });
    const first = await leaveBroken(lab);
    lab.maas.resetCalls();
    const diff = await macDiff(lab);
    expect(diff.findings.find((f) => f.code === 'MAC_LEFT_BROKEN')?.evidence).toMatchObject({ systemId: 'fc01', planId: first.plan!.id, source: 'error_description' });
    expect(lab.maas.calls.filter((c) => c.op === 'query')).toEqual([]);
  });

  it('the images are still missing: fix-macs refuses the commissioning with why and the step that fixes it; mac-diff keeps reporting the machine', async () => {
    lab = await labWith({ version: '3.4.10' });
    await leaveBroken(lab);
    lab.maas.state.rackControllers[0]!.bootImages = [{ name: 'ubuntu/jammy', architecture: 'amd64', subarches: ['generic'] }];
    const plan = await fixMacs(lab, false);
    expect(plan.plan?.steps).toEqual([]);
    const refused = plan.findings.find((f) => f.code === 'REPAIR_REFUSED' && f.subject === 'fc01-vm');
    expect(String(refused?.evidence.reason)).toMatch(/^Broken since maas-chatops plan [0-9a-f]+: ubuntu\/focal, MAAS's commissioning release, is not among the boot images of connected rack controller rack-b: .* It stays Broken until then\. To finish: import the boot images/);
    expect(plan.findings.filter((f) => f.code === 'MAC_LEFT_BROKEN')).toHaveLength(1);
    expect(lab.maas.calls.filter((c) => c.op === 'commission')).toHaveLength(1);
  });

  it('3.4 and the event log unreadable: the verdict says which Broken machines could not be checked for a plan\'s mark, rather than nothing', async () => {
    lab = await labWith({ version: '3.4.10' });
    await leaveBroken(lab);
    lab.maas.injectFaults({ status: 500, count: 3, path: /op=query.*level=DEBUG/ });
    const diff = await macDiff(lab);
    expect(diff.findings.filter((f) => f.code === 'MAC_LEFT_BROKEN')).toEqual([]);
    expect(diff.verdict).toMatch(/; 1 unchecked \(whether a fix-macs plan left them Broken: the event log could not be read, MAAS region-a answered 500/);
  });

  it('Broken by a person (or marked broken again after the plan): not reported as left by a plan, and fix-macs does not commission it', async () => {
    lab = await labWith({ version: '3.4.10' }, [{ system_id: 'hd01', hostname: 'hd01-vm', zone: 'site-b', status: 'Broken', macs: ['52:54:00:00:00:02'], power: virshPower(HOST, 'dom-hd01') }]);
    const first = await leaveBroken(lab);
    const node = (id: string) => ({ system_id: id, hostname: `${id}-vm` });
    // hd01: a person's mark. fc01: marked broken again by a person after the plan's mark.
    lab.maas.state.events!.push(
      nodeEvent({ id: 900, node: node('hd01'), type: 'User marking node broken', level: 'DEBUG', created: new Date(), description: '(ops) - disk failing' }),
      nodeEvent({ id: 901, node: node('fc01'), type: 'User marking node broken', level: 'DEBUG', created: new Date(), description: '(ops) - hold: NIC swap' }),
    );
    expect(first.plan?.id).toBeTruthy();
    const diff = await macDiff(lab);
    expect(diff.findings.filter((f) => f.code === 'MAC_LEFT_BROKEN')).toEqual([]);
    const plan = await fixMacs(lab, false);
    expect(plan.plan?.steps).toEqual([]);
  });
});
