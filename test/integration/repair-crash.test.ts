import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { executeRepairJob } from '../../jobs/repair-execute.ts';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import type { Notifier } from '../../src/engine/notifier.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { planReport } from '../../src/engine/repair/plan.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { startCrashWorker } from '../helpers/crash-worker.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// A worker is SIGKILLed between mark_broken and commission (or while MAAS commissions), then the plan runs again: the journal in
// (real) Redis makes it resume. Real parts: the MAAS simulator, an SSH VM host, Redis, a child process.

const HOST = '127.0.0.1';
const RECORDED = '52:54:00:b0:00:01';
const LIVE = '52:54:00:81:40:17';

let lab: MacLab | undefined;
let redis: Redis | undefined;
let prefix = '';
afterEach(async () => {
  await lab?.close();
  if (redis) await deletePrefix(redis, prefix);
  redis?.disconnect();
  lab = undefined;
  redis = undefined;
});

describe('fix-macs: a worker killed mid-plan resumes from the journal', () => {
  it('SIGKILL after mark_broken: the restart does not send it again and the machine is commissioned to Ready with the live MAC', async () => {
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
    prefix = freshPrefix('repair-crash');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    const plans = createPlanStore(redis, { prefix });
    const ctx: JobContext = { config: lab.config, adapters: lab.adapters, log: silentLogger() };

    // Planned, stored and approved, as the Slack path does.
    const plan = await fixMacsRepair.plan(ctx, 'site-b');
    expect(plan.steps.map((s) => `${s.subject} ${s.action}`)).toEqual(['site-b-node1 mark-broken', 'site-b-node1 set-mac', 'site-b-node1 commission', 'site-b-node4 set-mac']);
    await plans.create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel: 'C0OPS', now: Date.now(), ttlMs: 60_000 });
    await plans.setMessage(plan.id, '1700000000.000100');
    expect(await plans.decide(plan.id, 'approved', 'U0LEAD2', Date.now())).toEqual({ ok: true });

    // Slow MAAS answers leave a wide window between mark_broken and the next call.
    lab.maas.setLatency(150);
    lab.maas.resetCalls();
    const worker = startCrashWorker({ configText: lab.configText, configEnv: lab.env, prefix, planId: plan.id });
    const killedBy = await worker.killWhen(() => Boolean(lab?.maas.calls.some((c) => c.op === 'mark_broken' && c.status === 200)), 'mark_broken');
    expect(killedBy).toBe('SIGKILL');

    // Killed between the two: Broken, commission never sent.
    const node1 = () => lab?.maas.state.machines.find((m) => m.system_id === 'sb0001');
    expect(node1()?.status).toBe(NODE_STATUS.BROKEN);
    expect(lab.maas.calls.filter((c) => c.op === 'commission')).toEqual([]);
    expect(await plans.journal(plan.id).hasBegun()).toBe(true);

    // The restart: the same job, the same journal.
    lab.maas.setLatency(0);
    const thread: string[] = [];
    const notifier: Notifier = {
      postReports: async () => undefined,
      postError: async () => undefined,
      postPlan: async (t) => ({ channel: t.channel, ts: '1' }),
      updatePlan: async () => undefined,
      postInThread: async (_r, text) => void thread.push(text),
    };
    const [report] = await executeRepairJob.run({ ...ctx, plans, notifier }, { planId: plan.id, approvedBy: 'U0LEAD2' });
    expect(report?.results?.map((r) => `${r.subject} ${r.action} ${r.outcome}`)).toEqual([
      'site-b-node1 mark-broken verified',
      'site-b-node1 set-mac verified',
      'site-b-node1 commission verified',
      'site-b-node4 set-mac verified',
    ]);

    const calls = lab.maas.calls;
    expect(calls.filter((c) => c.op === 'mark_broken')).toHaveLength(1);
    expect(calls.filter((c) => c.op === 'commission')).toHaveLength(1);
    expect(calls.filter((c) => c.op === 'mark_fixed')).toEqual([]);
    expect(calls.filter((c) => c.method === 'PUT' && c.path.includes('/sb0001/'))).toHaveLength(1);
    expect(calls.filter((c) => c.method === 'PUT' && c.path.includes('/sb0004/'))).toHaveLength(1);
    expect(node1()).toMatchObject({ status: NODE_STATUS.READY });
    expect(node1()?.interfaces[0]?.mac_address).toBe(LIVE);
    expect(thread[0]).toMatch(/^Resuming after a restart/);
    expect((await plans.get(plan.id))?.state).toBe('done');

    // BullMQ may hand the finished job out once more (its summary failed to post): reported, not repeated.
    const writes = calls.filter((c) => c.method !== 'GET').length;
    const [again] = await executeRepairJob.run({ ...ctx, plans, notifier }, { planId: plan.id, approvedBy: 'U0LEAD2' });
    expect(again?.results).toEqual(report?.results);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toHaveLength(writes);
  }, 60_000);

  it('SIGKILL while MAAS commissions: the restart reads the machine and follows it to Ready; commission is sent once', async () => {
    let maasNow = 0;
    lab = await startMacLab({
      machines: [machine({ system_id: 'sb0001', hostname: 'site-b-node1', zone: 'site-b', status: 'Failed commissioning', macs: [RECORDED], live_boot_mac: LIVE, power: virshPower(HOST, 'site-b-node1') })],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', nics: [{ mac: LIVE }] }] } }] }],
      // MAAS takes 10 minutes to commission, on a clock of the test's: the worker is killed while it does.
      maasTiming: { commissioningMs: 10 * 60_000 },
      maasClock: () => maasNow,
    });
    prefix = freshPrefix('repair-crash');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    const plans = createPlanStore(redis, { prefix });
    // The restarted run waits on the same clock, so MAAS's minutes pass while it follows.
    const clock = { now: () => maasNow, sleep: async (ms: number) => void (maasNow += ms) };
    const ctx: JobContext = { config: lab.config, adapters: lab.adapters, log: silentLogger(), clock };
    const plan = await fixMacsRepair.plan(ctx, 'site-b');
    await plans.create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel: 'C0OPS', now: Date.now(), ttlMs: 60_000 });
    await plans.setMessage(plan.id, '1700000000.000100');
    expect(await plans.decide(plan.id, 'approved', 'U0LEAD2', Date.now())).toEqual({ ok: true });

    lab.maas.resetCalls();
    const worker = startCrashWorker({ configText: lab.configText, configEnv: lab.env, prefix, planId: plan.id });
    const killedBy = await worker.killWhen(() => Boolean(lab?.maas.calls.some((c) => c.op === 'commission' && c.status === 200)), 'commission');
    expect(killedBy).toBe('SIGKILL');
    const node1 = () => lab?.maas.state.machines.find((m) => m.system_id === 'sb0001');
    expect(node1()?.status).toBe(NODE_STATUS.COMMISSIONING);

    const thread: string[] = [];
    const notifier: Notifier = {
      postReports: async () => undefined,
      postError: async () => undefined,
      postPlan: async (t) => ({ channel: t.channel, ts: '1' }),
      updatePlan: async () => undefined,
      postInThread: async (_r, text) => void thread.push(text),
    };
    const [report] = await executeRepairJob.run({ ...ctx, plans, notifier }, { planId: plan.id, approvedBy: 'U0LEAD2' });
    expect(report?.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['mark-broken verified', 'set-mac verified', 'commission verified']);
    expect(lab.maas.calls.filter((c) => c.op === 'commission')).toHaveLength(1);
    expect(lab.maas.calls.filter((c) => c.op === 'mark_broken')).toHaveLength(1);
    expect(node1()).toMatchObject({ status: NODE_STATUS.READY, owner: null });
    expect(thread).toContain('site-b-node1: Commissioning since before the restart; following it (commission is not sent again)');
    expect((await plans.get(plan.id))?.state).toBe('done');
  }, 60_000);
});
