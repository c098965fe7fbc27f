import { afterEach, describe, expect, it } from 'vitest';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startOutageRig, type OutageRig } from '../../lab/repair-outage.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import { OUTAGE_LOCK, OUTAGE_MS, countBy, waitFor } from '../helpers/outage.ts';

// Redis is SIGKILLed right after the first MAAS write of an approved fix-macs reaches a slow MAAS
// (1.5 s per request) and stays away longer than the jobs' lock. The worker that was running loses
// its lock and its lease; when Redis is back (from its AOF), BullMQ hands the job to a worker again,
// which takes the lease with a larger token, reads the journal and MAAS, and finishes. Real parts:
// redis-server (AOF), BullMQ workers, the MAAS simulator, SSH VM hosts.

const HOST = '127.0.0.1';
const RECORDED = '52:54:00:b0:00:01';
const LIVE = '52:54:00:81:40:17';

let lab: MacLab | undefined;
let rig: OutageRig | undefined;
afterEach(async () => {
  await rig?.close();
  await lab?.close();
  rig = undefined;
  lab = undefined;
});

describe('fix-macs: Redis away past the lock mid-repair', () => {
  it('every MAAS write is sent once, the repair finishes after Redis returns, and Slack hears each line once', async () => {
    lab = await startMacLab({
      machines: [
        machine({ system_id: 'sb0001', hostname: 'site-b-node1', zone: 'site-b', status: 'Failed commissioning', macs: [RECORDED], live_boot_mac: LIVE, power: virshPower(HOST, 'site-b-node1') }),
        machine({ system_id: 'sb0004', hostname: 'site-b-node4', zone: 'site-b', status: 'Ready', macs: ['52:54:00:b0:00:04'], power: virshPower(HOST, 'site-b-node4') }),
      ],
      sites: [
        {
          name: 'site-b',
          zone: 'site-b',
          vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', nics: [{ mac: LIVE }] }, { name: 'site-b-node4', nics: [{ mac: '52:54:00:84:40:5c' }] }] } }],
        },
      ],
    });
    rig = await startOutageRig({ jobs: [fixMacsJob], context: { config: lab.config, adapters: lab.adapters }, lock: OUTAGE_LOCK });
    const plan = await fixMacsRepair.plan({ config: lab.config, adapters: lab.adapters, log: silentLogger() }, 'site-b');
    expect(plan.steps.map((s) => `${s.subject} ${s.action}`)).toEqual(['site-b-node1 mark-broken', 'site-b-node1 set-mac', 'site-b-node1 commission', 'site-b-node4 set-mac']);

    lab.maas.setLatency(1_500);
    lab.maas.resetCalls();
    await rig.approveAndQueue(plan);
    // The first write has reached MAAS (it answers 1.5 s later): Redis dies now.
    await waitFor(() => lab!.maas.calls.some((c) => c.op === 'mark_broken'), 60_000, 'mark_broken reaching MAAS');
    await rig.killRedis();
    const sshBefore = lab.sshCommands();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await rig.restartRedis();

    const stored = await rig.finished(plan.id, 90_000);
    expect(stored.state).toBe('done');
    expect(stored.results?.map((r) => `${r.subject} ${r.action} ${r.outcome}`)).toEqual([
      'site-b-node1 mark-broken verified',
      'site-b-node1 set-mac verified',
      'site-b-node1 commission verified',
      'site-b-node4 set-mac verified',
    ]);
    expect(stored.results?.[0]?.detail).toMatch(/not sent again/);

    // Counted by MAAS: each write exactly once.
    const writes = countBy(lab.maas.calls.filter((c) => c.method !== 'GET'), (c) => `${c.method} ${c.path}${c.op ? ` op=${c.op}` : ''}`);
    expect(writes).toEqual({
      'POST /MAAS/api/2.0/machines/sb0001/ op=mark_broken': 1,
      'PUT /MAAS/api/2.0/nodes/sb0001/interfaces/1/': 1,
      'POST /MAAS/api/2.0/machines/sb0001/ op=commission': 1,
      'PUT /MAAS/api/2.0/nodes/sb0004/interfaces/2/': 1,
    });
    // The run that took over did not measure again over SSH: the journal had begun.
    expect(lab.sshCommands()).toBe(sshBefore);
    const node1 = lab.maas.state.machines.find((m) => m.system_id === 'sb0001');
    expect(node1?.status).toBe(NODE_STATUS.READY);
    expect(node1?.interfaces[0]?.mac_address).toBe(LIVE);

    // Slack: one resume notice, one progress line per machine (and one when commissioning starts), one summary, no error.
    await waitFor(() => rig!.said.summaries.length > 0, 10_000, 'the summary');
    const thread = rig.said.thread;
    expect(thread.filter((t) => t.startsWith('Re-measured'))).toHaveLength(1);
    expect(thread.filter((t) => t.startsWith('Resuming after a restart'))).toHaveLength(1);
    // node1: the line that commissioning started, then its summary line.
    expect(thread.filter((t) => t.startsWith('site-b-node1: commissioning started'))).toHaveLength(1);
    expect(thread.filter((t) => t.startsWith('site-b-node1: ✅'))).toHaveLength(1);
    expect(thread.filter((t) => t.startsWith('site-b-node4:'))).toHaveLength(1);
    expect(rig.said.summaries).toHaveLength(1);
    expect(rig.said.errors).toEqual([]);
  }, 150_000);
});
