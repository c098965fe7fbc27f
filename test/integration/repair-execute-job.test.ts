import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { executeRepairJob } from '../../jobs/repair-execute.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { fixMacsRepair } from '../../src/features/macs/repair.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Notifier } from '../../src/engine/notifier.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { planReport } from '../../src/engine/repair/plan.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// The execute job on a real MAAS simulator and real Redis: its data is a plan id and an approver,
// and what it runs is the stored plan, only once that plan is read back as one this version runs.

const HOST = '127.0.0.1';
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

async function approvedPlan() {
  lab = await startMacLab({
    machines: [machine({ system_id: 'sb0004', hostname: 'site-b-node4', zone: 'site-b', status: 'Ready', macs: ['52:54:00:b0:00:04'], power: virshPower(HOST, 'site-b-node4') })],
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node4', nics: [{ mac: '52:54:00:84:40:5c' }] }] } }] }],
  });
  prefix = freshPrefix('repair-execute');
  redis = createRedis(TEST_REDIS_URL, 'worker');
  const plans = createPlanStore(redis, { prefix });
  const thread: string[] = [];
  const notifier: Notifier = {
    postReports: async () => undefined,
    postError: async () => undefined,
    postPlan: async (t) => ({ channel: t.channel, ts: '1700000000.000100' }),
    updatePlan: async () => undefined,
    postInThread: async (_ref, text) => void thread.push(text),
  };
  const ctx: JobContext = { config: lab.config, adapters: lab.adapters, log: silentLogger(), plans, notifier };
  const plan = await fixMacsRepair.plan(ctx, 'site-b');
  expect(plan.steps.map((s) => s.action)).toEqual(['set-mac']);
  await plans.create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel: 'C0OPS', now: Date.now(), ttlMs: 60_000 });
  await plans.setMessage(plan.id, '1700000000.000100');
  expect(await plans.decide(plan.id, 'approved', 'U0LEAD2', Date.now())).toEqual({ ok: true });
  lab.maas.resetCalls();
  return { ctx, plans, plan, thread, lab, redis };
}

describe('the execute job', () => {
  it('runs the approved plan from its id alone, and a second delivery reports the run instead of repeating it', async () => {
    const { ctx, plan, thread, lab } = await approvedPlan();
    const [report] = await executeRepairJob.run(ctx, { planId: plan.id, approvedBy: 'U0LEAD2' });
    expect(report?.results?.map((r) => r.outcome)).toEqual(['verified']);
    expect(thread.filter((t) => t.startsWith('Re-measured'))).toHaveLength(1);
    const writes = () => lab.maas.calls.filter((c) => c.method !== 'GET').length;
    expect(writes()).toBe(1);
    const [again] = await executeRepairJob.run(ctx, { planId: plan.id, approvedBy: 'U0LEAD2' });
    expect(again?.results?.map((r) => r.outcome)).toEqual(['verified']);
    expect(writes()).toBe(1);
  });

  it('refuses a stored plan this version cannot read (an unknown step kind), says how to get a fresh one, and changes nothing', async () => {
    const { ctx, plans, plan, lab, redis } = await approvedPlan();
    const key = `${prefix}:repair:plan:${plan.id}`;
    const record = JSON.parse((await redis.hget(key, 'record')) ?? '{}') as { plan: { steps: { action: string }[] } };
    record.plan.steps[0]!.action = 'update_mac';
    await redis.hset(key, 'record', JSON.stringify(record));
    await expect(executeRepairJob.run(ctx, { planId: plan.id, approvedBy: 'U0LEAD2' })).rejects.toMatchObject({
      code: 'GUARD_REFUSED',
      message: expect.stringMatching(new RegExp(`^plan ${plan.id} as stored cannot be run by this version \\(plan\\.steps\\[0\\]\\.action: .*\\), so it was not run$`)),
      hint: 'Run the /maas fix command again for a fresh plan',
    });
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(await plans.journal(plan.id).hasBegun()).toBe(false);
    expect(await redis.hget(key, 'state')).toBe('approved');
  });

  it('refuses job data that carries more than a plan id and an approver', async () => {
    const { ctx, plan, lab } = await approvedPlan();
    await expect(executeRepairJob.run(ctx, { planId: plan.id, approvedBy: 'U0LEAD2', target: 'site-b' } as never)).rejects.toMatchObject({ code: 'GUARD_REFUSED' });
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });
});
