import { afterEach, describe, expect, it } from 'vitest';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import { machine, virshPower, type MaasSimCall } from '../../lab/maas-sim/index.ts';
import { macLabScenario, startMacLab, type MacLab, type VmDomain } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import type { MaasClient } from '../../src/adapters/maas/types.ts';
import { executePlan } from '../../src/engine/repair/executor.ts';
import { memoryJournal } from '../../src/engine/repair/journal.ts';
import { macStepRunner } from '../../src/features/macs/repair-steps.ts';
import { withId } from '../../src/engine/repair/plan.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';

// Real parts: the MAAS simulator (OAuth, MAAS's state rules, a record of every call) and SSH VM
// hosts whose virsh reports the live MACs, reached by the real MAAS client and SSH connector.

const HOST = '127.0.0.1';
let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

/** One fake clock for MAAS and the repair: sleeping advances it, so MAAS's 30 minutes pass at once. */
let clockMs = 0;
const clock = { now: () => clockMs, sleep: async (ms: number) => void (clockMs += ms) };
const ctxOf = (l: MacLab): JobContext => ({ config: l.config, adapters: l.adapters, log: silentLogger(), clock });
const maasOf = (l: MacLab): MaasClient => l.adapters.maas('region-a');
const runnerOf = (l: MacLab, progress?: (text: string) => void) => macStepRunner(maasOf(l), { follow: { now: clock.now, sleep: clock.sleep }, ...(progress ? { progress } : {}) });

/** Writes (POST ops and PUTs) against one machine, as `op` or `PUT`. */
function writesTo(calls: readonly MaasSimCall[], systemId: string): string[] {
  return calls
    .filter((c) => c.method !== 'GET' && c.path.includes(`/${systemId}/`))
    .map((c) => (c.op ? `${c.op} ${c.status}` : `${c.method} ${c.form.mac_address?.[0] ?? ''} ${c.status}`));
}

/** One VM host; each machine's domain is named after it and holds `live`. */
async function labWith(entries: { id: string; status: string; recorded: string; live: string; owner?: string | null; locked?: boolean }[], timing?: { statusMonitor?: boolean; commissioningMs?: number }): Promise<MacLab> {
  const domains: VmDomain[] = entries.map((e) => ({ name: `dom-${e.id}`, nics: [{ mac: e.live }] }));
  clockMs = 0;
  return startMacLab({
    machines: entries.map((e) =>
      machine({
        system_id: e.id,
        hostname: `${e.id}-vm`,
        zone: 'site-b',
        status: e.status,
        macs: [e.recorded],
        // The VM PXE-boots from its live NIC: MAAS commissions it only once it records that MAC.
        live_boot_mac: e.live,
        power: virshPower(HOST, `dom-${e.id}`),
        ...(e.owner !== undefined ? { owner: e.owner } : {}),
        ...(e.locked ? { locked: true } : {}),
      }),
    ),
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
    maasClock: clock.now,
    ...(timing ? { maasTiming: timing } : {}),
  });
}

describe('fix-macs against the MAAS simulator (the seed-001 site)', () => {
  it('plans without changing anything: exit status 1, no write reaches MAAS', async () => {
    const scenario = macLabScenario({ siteA: ['127.0.10.1'], siteB: ['127.0.20.1', '127.0.20.2'] });
    lab = await startMacLab({ machines: scenario.maasMachines, sites: scenario.sites });
    const reports = await fixMacsJob.run(ctxOf(lab), { target: 'site-b', requestedBy: 'terminal:ops', apply: false, interactive: true });
    const [report] = reports;
    expect(report).toMatchObject({ kind: 'fix-macs', target: 'site-b' });
    expect(report?.results).toBeUndefined();
    expect(report?.verdict).toBe('Plan: update 10 MACs on 9 machines at site-b (1 through mark_broken → update → commission)');
    expect(report?.plan?.steps.filter((s) => s.subject === 'site-b-node1').map((s) => s.action)).toEqual(['mark-broken', 'set-mac', 'commission']);
    expect(report?.plan?.steps.filter((s) => s.subject === 'site-b-node2').map((s) => s.action)).toEqual(['set-mac']);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(exitCodeFor(reports)).toBe(1);
  });

  it('--apply: each state takes its sequence, every change is read back, the Deployed machine is never marked broken', async () => {
    const scenario = macLabScenario({ siteA: ['127.0.10.1'], siteB: ['127.0.20.1', '127.0.20.2'] });
    lab = await startMacLab({ machines: scenario.maasMachines, sites: scenario.sites });
    const reports = await fixMacsJob.run(ctxOf(lab), { target: 'site-b', requestedBy: 'terminal:ops', apply: true, interactive: true });
    const [report] = reports as [Report];
    expect(report.results?.every((r) => r.outcome === 'verified')).toBe(true);
    expect(report.results).toHaveLength(12);
    expect(report.verdict).toBe('fix-macs site-b done: 12 of 12 steps verified (applied by terminal:ops)');
    expect(exitCodeFor(reports)).toBe(0);

    const calls = lab.maas.calls;
    const live = (n: number, nic = 0) => `52:54:00:${(0x80 + n).toString(16)}:${(0x40 + nic).toString(16)}:${((0x17 * n) & 0xff).toString(16).padStart(2, '0')}`;
    // Failed commissioning: mark_broken → PUT → commission, each once, in that order; never mark_fixed.
    expect(writesTo(calls, 'sb0001')).toEqual(['mark_broken 200', `PUT ${live(1)} 200`, 'commission 200']);
    const markBroken = calls.find((c) => c.op === 'mark_broken');
    expect(markBroken?.form.comment?.[0]).toMatch(/^maas-chatops plan [0-9a-f]{16}: /);
    // Deployed: the PUT alone; mark_broken never reaches it (it would release and power it off).
    expect(writesTo(calls, 'sb0002')).toEqual([`PUT ${live(2)} 200`]);
    expect(calls.filter((c) => c.op === 'mark_broken').map((c) => c.path)).toEqual(['/MAAS/api/2.0/machines/sb0001/']);
    // Two NICs on a Ready machine: two PUTs.
    expect(writesTo(calls, 'sb0003')).toEqual([`PUT ${live(3, 0)} 200`, `PUT ${live(3, 1)} 200`]);
    // Every PUT is followed by a GET of the same interface (the read-back).
    calls.forEach((c, i) => {
      if (c.method !== 'PUT') return;
      expect(calls.slice(i + 1).some((d) => d.method === 'GET' && d.path === c.path), c.path).toBe(true);
    });

    const state = (id: string) => lab?.maas.state.machines.find((m) => m.system_id === id);
    expect(state('sb0001')?.status).toBe(NODE_STATUS.READY);
    expect(state('sb0002')).toMatchObject({ status: NODE_STATUS.DEPLOYED, power_state: 'on' });
    expect(state('sb0001')?.interfaces[0]?.mac_address).toBe(live(1));

    // The check agrees afterwards: every machine matches its live MACs.
    const after = await fixMacsJob.run(ctxOf(lab), { target: 'site-b', interactive: true });
    expect(after[0]?.plan?.steps).toEqual([]);
    expect(after[0]?.verdict).toMatch(/^Nothing to repair at site-b: All 12 machines at site-b match/);
    expect(exitCodeFor(after)).toBe(0);
  });
});

describe('fix-macs executor guards against MAAS', () => {
  it('a 409 mid-plan stops the plan: done steps reported, the rest not run', async () => {
    lab = await labWith([
      { id: 'm1', status: 'Ready', recorded: '52:54:00:00:00:01', live: '52:54:00:aa:00:01' },
      { id: 'm2', status: 'Ready', recorded: '52:54:00:00:00:02', live: '52:54:00:aa:00:02' },
      { id: 'm3', status: 'Ready', recorded: '52:54:00:00:00:03', live: '52:54:00:aa:00:03' },
    ]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    expect(plan.steps).toHaveLength(3);
    // Between approval and its turn, MAAS starts commissioning m2: MAAS answers its PUT with 409.
    const m2 = lab.maas.state.machines.find((m) => m.system_id === 'm2');
    if (m2) m2.status = NODE_STATUS.COMMISSIONING;
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => [r.subject, r.outcome])).toEqual([
      ['m1-vm', 'verified'],
      ['m2-vm', 'failed'],
      ['m3-vm', 'skipped'],
    ]);
    expect(results[1]?.detail).toMatch(/answered 409 .*not New, Ready, Allocated, or Broken/);
    expect(results[2]?.detail).toBe('not run: the plan stopped at m2-vm (set-mac)');
    expect(writesTo(lab.maas.calls, 'm3')).toEqual([]);
    expect(lab.maas.state.machines.find((m) => m.system_id === 'm3')?.interfaces[0]?.mac_address).toBe('52:54:00:00:00:03');
  });

  it('a failure after mark_broken still runs commission: the machine is never left Broken, and the repeated failure is MAAS\'s own words', async () => {
    lab = await labWith([{ id: 'f2', status: 'Failed commissioning', recorded: '52:54:00:00:00:12', live: '52:54:00:aa:00:12' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    // After approval, someone enlists another node with that live MAC: MAAS refuses the PUT (400).
    lab.maas.state.machines.push({ ...structuredClone(lab.maas.state.machines[0]!), id: 99, system_id: 'dup', hostname: 'dup', interfaces: [{ ...lab.maas.state.machines[0]!.interfaces[0]!, id: 999, mac_address: '52:54:00:aa:00:12' }] });
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => [r.action, r.outcome])).toEqual([
      ['mark-broken', 'verified'],
      ['set-mac', 'failed'],
      ['commission', 'failed'],
    ]);
    expect(results[1]?.detail).toMatch(/answered 400 .*already in use/);
    // The old MAC is still recorded, so the VM PXE-boots as an unknown node and MAAS times it out.
    expect(results[2]?.detail).toMatch(/^commissioning failed again after 30m: Failed commissioning: Node operation 'Commissioning' timed out after 30 minutes\. It is Failed commissioning, not Broken/);
    expect(writesTo(lab.maas.calls, 'f2')).toEqual(['mark_broken 200', 'PUT 52:54:00:aa:00:12 400', 'commission 200']);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.FAILED_COMMISSIONING);
  });

  it('a machine owned by another MAAS user is refused at planning (whoami), with who should run it, and nothing is sent', async () => {
    lab = await labWith([{ id: 'f1', status: 'Failed commissioning', recorded: '52:54:00:00:00:11', live: '52:54:00:aa:00:11', owner: 'alice' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    expect(plan.steps).toEqual([]);
    const detail = plan.refusals[0]?.detail ?? '';
    expect(detail).toMatch(/owned by alice \(commissioning makes whoever started it the owner\): MAAS lets only the owner mark it broken, even for an admin, and the API key is admin's/);
    expect(detail).toContain("set this region's apiKey to alice's key if alice is a MAAS admin, or have alice mark it broken in MAAS");
    expect(detail).not.toMatch(/acquire/);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('an owner changed after planning: MAAS answers 403 to mark_broken, refused with a hint, nothing else sent', async () => {
    lab = await labWith([{ id: 'f4', status: 'Failed commissioning', recorded: '52:54:00:00:00:14', live: '52:54:00:aa:00:14' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    lab.maas.state.machines[0]!.owner = 'alice';
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results[0]).toMatchObject({ action: 'mark-broken', outcome: 'refused' });
    expect(results.slice(1).map((r) => r.outcome)).toEqual(['skipped', 'skipped']);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET' && c.path.includes('/f4/'))).toEqual([]);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.FAILED_COMMISSIONING);
  });

  it('an API key whose user is not a MAAS admin: refused before anything is sent or run anywhere (no power_parameters, no SSH), naming the right and what to configure', async () => {
    const domains = [{ name: 'dom-n1', nics: [{ mac: '52:54:00:aa:00:15' }] }, { name: 'dom-n2', nics: [{ mac: '52:54:00:aa:00:16' }] }];
    lab = await startMacLab({
      machines: [
        machine({ system_id: 'n1', hostname: 'n1-vm', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:00:00:15'], power: virshPower(HOST, 'dom-n1') }),
        machine({ system_id: 'n2', hostname: 'n2-vm', zone: 'site-b', status: 'Ready', macs: ['52:54:00:00:00:16'], power: virshPower(HOST, 'dom-n2') }),
      ],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
    });
    lab.maas.state.userIsAdmin = false;
    const [report] = await fixMacsJob.run(ctxOf(lab), { target: 'site-b', requestedBy: 'terminal:ops', apply: true, interactive: true });
    expect(report?.verdict).toBe('Could not plan fix-macs site-b');
    const reason = String(report?.findings[0]?.evidence.reason);
    expect(reason).toMatch(/^fix-macs needs a MAAS admin and the API key for MAAS region-a is admin's, who is not one: nothing was sent or run/);
    expect(reason).toContain('GET machines/?op=power_parameters');
    expect(reason).toContain('Set maas.region-a.apiKey to the API key of a MAAS admin');
    expect(reason).not.toMatch(/\b403\b/);
    expect(lab.maas.calls.map((c) => `${c.method} ${c.path}${c.op ? `?op=${c.op}` : ''}`)).toEqual(['GET /MAAS/api/2.0/users/?op=whoami']);
    expect(lab.sshConnections()).toBe(0);
  });

  it('never sends mark_broken to a Deployed machine, even when a plan asks for it', async () => {
    lab = await labWith([{ id: 'd1', status: 'Deployed', recorded: '52:54:00:00:00:21', live: '52:54:00:aa:00:21' }]);
    const forged = withId({
      kind: 'fix-macs',
      target: 'site-b',
      steps: [{ subject: 'd1-vm', action: 'mark-broken', detail: 'forged', params: { systemId: 'd1', hostname: 'd1-vm', status: 'Deployed', owner: 'admin' } }],
      refusals: [],
      findings: [],
      verdict: 'forged',
    });
    const results = await executePlan(forged, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results[0]).toMatchObject({ outcome: 'refused', detail: expect.stringContaining('would release and power off') });
    expect(lab.maas.calls.filter((c) => c.op === 'mark_broken')).toEqual([]);
    expect(lab.maas.state.machines[0]).toMatchObject({ status: NODE_STATUS.DEPLOYED, power_state: 'on' });
  });

  it('refuses a plan over the bound without touching anything', async () => {
    lab = await labWith([
      { id: 'b1', status: 'Ready', recorded: '52:54:00:00:00:31', live: '52:54:00:aa:00:31' },
      { id: 'b2', status: 'Ready', recorded: '52:54:00:00:00:32', live: '52:54:00:aa:00:32' },
    ]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 1 });
    expect(results.map((r) => r.outcome)).toEqual(['refused', 'refused']);
    expect(results[0]?.detail).toMatch(/touches 2 subjects, over the bound of 1/);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('resumes a plan whose mark_broken went through before a crash: not sent again, the machine is commissioned to Ready', async () => {
    lab = await labWith([{ id: 'r1', status: 'Failed commissioning', recorded: '52:54:00:00:00:41', live: '52:54:00:aa:00:41' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    const journal = memoryJournal();
    await journal.begin();
    // The crashed run: mark_broken journaled as started and answered by MAAS, nothing more.
    await journal.set(0, { state: 'started', at: Date.now() });
    await maasOf(lab).markBroken('r1', 'the crashed run');
    const results = await executePlan(plan, { runner: runnerOf(lab), journal, maxSubjects: 50 });
    expect(results.map((r) => r.outcome)).toEqual(['verified', 'verified', 'verified']);
    expect(results[0]?.detail).toMatch(/not sent again/);
    expect(writesTo(lab.maas.calls, 'r1')).toEqual(['mark_broken 200', 'PUT 52:54:00:aa:00:41 200', 'commission 200']);
    expect(lab.maas.state.machines[0]).toMatchObject({ status: NODE_STATUS.READY, owner: null });
  });

  it('a worker that died while MAAS commissions resumes by reading the machine: it follows, commission is not sent twice', async () => {
    lab = await labWith([{ id: 'r5', status: 'Failed commissioning', recorded: '52:54:00:00:00:45', live: '52:54:00:aa:00:45' }], { commissioningMs: 10 * 60_000 });
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    const journal = memoryJournal();
    await journal.begin();
    // The dead run: mark_broken and the PUT done and journaled, commission sent, then the worker died.
    const first = await executePlan({ ...plan, steps: plan.steps.slice(0, 2) }, { runner: runnerOf(lab), journal, maxSubjects: 50 });
    expect(first.map((r) => r.outcome)).toEqual(['verified', 'verified']);
    await journal.set(2, { state: 'started', at: clock.now() });
    await maasOf(lab).commission('r5');
    const progress: string[] = [];
    const results = await executePlan(plan, { runner: runnerOf(lab, (t) => void progress.push(t)), journal, maxSubjects: 50 });
    expect(results.map((r) => [r.action, r.outcome])).toEqual([
      ['mark-broken', 'verified'],
      ['set-mac', 'verified'],
      ['commission', 'verified'],
    ]);
    expect(progress[0]).toBe('r5-vm: Commissioning since before the restart; following it (commission is not sent again)');
    expect(lab.maas.calls.filter((c) => c.op === 'commission')).toHaveLength(1);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.READY);
  });

  it('resumes after a mark_broken journaled "failed" that MAAS had applied: commission still runs, the machine is not left Broken', async () => {
    lab = await labWith([{ id: 'r2', status: 'Failed commissioning', recorded: '52:54:00:00:00:42', live: '52:54:00:aa:00:42' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    const journal = memoryJournal();
    await journal.begin();
    // The crashed run: mark_broken timed out (journaled failed) although MAAS applied it.
    await maasOf(lab).markBroken('r2', 'the crashed run');
    await journal.set(0, { state: 'done', at: Date.now(), result: { subject: 'r2-vm', action: 'mark-broken', outcome: 'failed', detail: 'timed out' } });
    const results = await executePlan(plan, { runner: runnerOf(lab), journal, maxSubjects: 50 });
    expect(results.map((r) => [r.action, r.outcome])).toEqual([
      ['mark-broken', 'failed'],
      ['set-mac', 'skipped'],
      ['commission', 'failed'],
    ]);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.FAILED_COMMISSIONING);
  });

  it('a commission answered 502 is read before it is sent again: it ends Ready, not left Broken', async () => {
    lab = await labWith([{ id: 'r3', status: 'Failed commissioning', recorded: '52:54:00:00:00:43', live: '52:54:00:aa:00:43' }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    lab.maas.injectFaults({ status: 502, count: 1, path: /op=commission/ });
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => [r.action, r.outcome])).toEqual([
      ['mark-broken', 'verified'],
      ['set-mac', 'verified'],
      ['commission', 'verified'],
    ]);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.READY);
    expect(writesTo(lab.maas.calls, 'r3').filter((w) => w.startsWith('commission'))).toEqual(['commission 502', 'commission 200']);
  });

  it('a commissioning that hangs is followed up to repair.commissionTimeout, then reported as still Commissioning (not Broken) with what MAAS will do', async () => {
    lab = await labWith([{ id: 'h1', status: 'Failed commissioning', recorded: '52:54:00:00:00:51', live: '52:54:00:aa:00:51' }], { statusMonitor: false });
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    // The VM now PXE-boots from another NIC MAAS does not know, and MAAS's status monitor is not running.
    lab.maas.state.machines[0]!.live_boot_mac = '52:54:00:cc:00:51';
    const progress: string[] = [];
    const results = await executePlan(plan, { runner: runnerOf(lab, (t) => void progress.push(t)), journal: memoryJournal(), maxSubjects: 50 });
    expect(results[2]).toMatchObject({ action: 'commission', outcome: 'failed' });
    expect(results[2]?.detail).toBe(
      'still Commissioning after 40m (repair.commissionTimeout): fix-macs stopped following it. MAAS marks it Failed commissioning itself once its node_timeout passes without hearing from the machine; watch it in MAAS, or abort it there (op=abort)',
    );
    expect(progress[0]).toBe('h1-vm: commissioning started (Broken → Commissioning); following it until Ready or failed');
    // A line when it started and one every 5 minutes, not one per read.
    expect(progress.length).toBe(10);
    expect(lab.maas.state.machines[0]?.status).toBe(NODE_STATUS.COMMISSIONING);
  });

  it('a locked machine is refused in the plan with the reason and the MAAS action that unlocks it; nothing is sent', async () => {
    lab = await labWith([{ id: 'l1', status: 'Deployed', recorded: '52:54:00:00:00:61', live: '52:54:00:aa:00:61', locked: true }]);
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    expect(plan.steps).toEqual([]);
    expect(plan.refusals[0]?.detail).toBe(
      'Deployed and locked in MAAS: MAAS refuses every edit and admin action on a locked machine (403). If its MAC should change, unlock it first (MAAS UI: Take action → Unlock, or POST machines/l1/?op=unlock, by its owner or an admin), then run fix-macs again',
    );
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('a bond still carrying its repaired member\'s old MAC is reported and updated; a VLAN follows its parent by itself', async () => {
    const domains: VmDomain[] = [{ name: 'dom-b1', nics: [{ mac: '52:54:00:aa:00:71' }] }];
    lab = await startMacLab({
      machines: [
        machine({
          system_id: 'b1',
          hostname: 'b1-vm',
          zone: 'site-b',
          status: 'Ready',
          interfaces: [
            { name: 'eth0', mac: '52:54:00:00:00:71' },
            { name: 'bond0', type: 'bond', mac: '52:54:00:00:00:71', parents: ['eth0'] },
            { name: 'bond0.10', type: 'vlan', mac: '52:54:00:00:00:71', parents: ['bond0'] },
          ],
          power: virshPower(HOST, 'dom-b1'),
        }),
      ],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
    });
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    expect(plan.steps.map((s) => s.detail)).toEqual([
      'eth0: 52:54:00:00:00:71 → 52:54:00:aa:00:71 (Ready: MAAS takes the interface edit as the machine stands)',
      "bond0 (bond over eth0): 52:54:00:00:00:71 → 52:54:00:aa:00:71: it still carries eth0's old MAC, and MAAS does not change a bond's MAC with its member's (Ready: MAAS takes the interface edit as the machine stands)",
    ]);
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => r.outcome)).toEqual(['verified', 'verified']);
    expect(lab.maas.state.machines[0]?.interfaces.map((i) => [i.name, i.mac_address])).toEqual([
      ['eth0', '52:54:00:aa:00:71'],
      ['bond0', '52:54:00:aa:00:71'],
      ['bond0.10', '52:54:00:aa:00:71'],
    ]);
  });

  it('a bond that kept an already repaired member\'s old MAC: mac-diff reports MAC_CHILD_STALE, fix-macs sets the member\'s MAC', async () => {
    const domains: VmDomain[] = [{ name: 'dom-c1', nics: [{ mac: '52:54:00:aa:00:81' }] }];
    lab = await startMacLab({
      machines: [
        machine({
          system_id: 'c1',
          hostname: 'c1-vm',
          zone: 'site-b',
          status: 'Deployed',
          interfaces: [
            { name: 'eth0', mac: '52:54:00:aa:00:81' },
            { name: 'br0', type: 'bridge', mac: '52:54:00:00:00:81', parents: ['eth0'] },
          ],
          power: virshPower(HOST, 'dom-c1'),
        }),
      ],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
    });
    const plan = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    const stale = plan.findings.filter((f) => f.code === 'MAC_CHILD_STALE');
    expect(stale.map((f) => [f.severity, f.summary])).toEqual([
      ['warning', "c1-vm: bridge br0 still carries 52:54:00:00:00:81, which none of its members (eth0) has and the live domain does not: MAAS does not change a bridge's MAC with its members'"],
    ]);
    expect(plan.steps.map((s) => s.detail)).toEqual([
      "br0 (bridge): 52:54:00:00:00:81 → 52:54:00:aa:00:81: a MAC none of its members has; MAAS gives a bridge its first member's (Deployed: MAAS takes the interface edit as the machine stands)",
    ]);
    const results = await executePlan(plan, { runner: runnerOf(lab), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => r.outcome)).toEqual(['verified']);
    expect(lab.maas.state.machines[0]?.interfaces.find((i) => i.name === 'br0')?.mac_address).toBe('52:54:00:aa:00:81');
    const after = await fixMacsRepair.plan(ctxOf(lab), 'site-b');
    expect(after.findings.filter((f) => f.code === 'MAC_CHILD_STALE')).toEqual([]);
    expect(after.steps).toEqual([]);
  });
});
