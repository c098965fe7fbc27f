import { afterEach, describe, expect, it } from 'vitest';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startOutageRig, type OutageRig } from '../../lab/repair-outage.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import { startCrashWorker } from '../helpers/crash-worker.ts';
import { OUTAGE_LOCK, OUTAGE_MS, countBy, waitFor } from '../helpers/outage.ts';

// The worker process running an approved fix-macs is SIGKILLed while its mark_broken is inside a
// slow MAAS (1.5 s per request), and Redis is down at that moment too. Nobody recorded the answer:
// the journal says "sending". Another worker takes the job when Redis is back, reads the machine
// (Broken: the write took effect), does not send mark_broken again, and finishes. Real parts: a
// worker process (BullMQ), redis-server (AOF), the MAAS simulator, SSH VM hosts.

const HOST = '127.0.0.1';
const LIVE = '52:54:00:81:40:17';

let lab: MacLab | undefined;
let rig: OutageRig | undefined;
afterEach(async () => {
  await rig?.close();
  await lab?.close();
  rig = undefined;
  lab = undefined;
});

describe('fix-macs: a worker SIGKILLed during a write while Redis is away', () => {
  it('the write is resolved by reading MAAS, never sent twice, and another worker finishes the repair', async () => {
    lab = await startMacLab({
      machines: [machine({ system_id: 'sb0001', hostname: 'site-b-node1', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:b0:00:01'], live_boot_mac: LIVE, power: virshPower(HOST, 'site-b-node1') })],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', nics: [{ mac: LIVE }] }] } }] }],
    });
    // No worker in this process yet: the child process takes the job.
    rig = await startOutageRig({ jobs: [fixMacsJob], context: { config: lab.config, adapters: lab.adapters }, lock: OUTAGE_LOCK, workers: 0 });
    const plan = await fixMacsRepair.plan({ config: lab.config, adapters: lab.adapters, log: silentLogger() }, 'site-b');
    expect(plan.steps.map((s) => s.action)).toEqual(['mark-broken', 'set-mac', 'commission']);

    lab.maas.setLatency(1_500);
    lab.maas.resetCalls();
    await rig.approveAndQueue(plan);
    const worker = startCrashWorker({ configText: lab.configText, configEnv: lab.env, prefix: rig.prefix, planId: plan.id, redisUrl: rig.redisUrl, bullmqLock: OUTAGE_LOCK });
    const killed = await worker.killWhen(async () => {
      if (!lab!.maas.calls.some((c) => c.op === 'mark_broken')) return false;
      // mark_broken is inside MAAS and unanswered: Redis goes first, then the worker.
      await rig!.killRedis();
      return true;
    }, 'mark_broken reaching MAAS');
    expect(killed).toBe('SIGKILL');
    expect(lab.maas.calls.find((c) => c.op === 'mark_broken')?.status).toBe(0);

    rig.addWorker();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await rig.restartRedis();

    const stored = await rig.finished(plan.id, 90_000);
    expect(stored.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['mark-broken verified', 'set-mac verified', 'commission verified']);
    expect(stored.results?.[0]?.detail).toMatch(/not sent again/);
    expect(countBy(lab.maas.calls.filter((c) => c.method !== 'GET'), (c) => `${c.method} ${c.path}${c.op ? ` op=${c.op}` : ''}`)).toEqual({
      'POST /MAAS/api/2.0/machines/sb0001/ op=mark_broken': 1,
      'PUT /MAAS/api/2.0/nodes/sb0001/interfaces/1/': 1,
      'POST /MAAS/api/2.0/machines/sb0001/ op=commission': 1,
    });
    const node1 = lab.maas.state.machines.find((m) => m.system_id === 'sb0001');
    expect(node1?.status).toBe(NODE_STATUS.READY);
    expect(node1?.interfaces[0]?.mac_address).toBe(LIVE);

    await waitFor(() => rig!.said.summaries.length > 0, 10_000, 'the summary');
    expect(rig.said.thread.filter((t) => t.startsWith('Resuming after a restart'))).toHaveLength(1);
    expect(rig.said.summaries).toHaveLength(1);
  }, 150_000);
});
