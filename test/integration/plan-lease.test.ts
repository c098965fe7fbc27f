import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Adapters } from '../../src/adapters/adapters.ts';
import type { MaasClient } from '../../src/adapters/maas/types.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { executionJobId, REPAIR_EXECUTE_JOB } from '../../src/engine/repair/execute-job-data.ts';
import { fencedAdapters } from '../../src/engine/repair/fenced-adapters.ts';
import { LeaseLostError, type PlanLease } from '../../src/engine/repair/plan-lease.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { stepWriter, UnprovenWriteError, type WriteRoute } from '../../src/engine/repair/write-guard.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// The lease, the fenced journal and the write guard against real Redis.

let redis: Redis | undefined;
let prefix = '';
const leases: PlanLease[] = [];
afterEach(async () => {
  for (const l of leases.splice(0)) await l.release().catch(() => undefined);
  if (redis) await deletePrefix(redis, prefix);
  redis?.disconnect();
  redis = undefined;
});

function store() {
  prefix = freshPrefix('plan-lease');
  redis = createRedis(TEST_REDIS_URL, 'worker');
  return createPlanStore(redis, { prefix });
}

const PLAN = '0123456789abcdef';
const keep = (l: PlanLease) => (leases.push(l), l);

describe('the plan lease', () => {
  it('one run at a time: the next waits for the lease, gets a larger token, and the first is fenced out', async () => {
    const plans = store();
    const first = keep(await plans.lease(PLAN, { ttlMs: 2_000 }));
    await expect(plans.lease(PLAN, { ttlMs: 2_000, waitMs: 300 })).rejects.toThrow(/held by another run/);
    const waiting = plans.lease(PLAN, { ttlMs: 2_000, waitMs: 5_000 });
    await first.release();
    const second = keep(await waiting);
    expect(second.token).toBeGreaterThan(first.token);
    await expect(first.check()).rejects.toBeInstanceOf(LeaseLostError);
    await expect(second.check()).resolves.toBeUndefined();
  });

  it('a lapsed lease stops the run: its fenced journal writes nothing, and the loss is final', async () => {
    const plans = store();
    const lease = keep(await plans.lease(PLAN, { ttlMs: 2_000 }));
    const journal = plans.journal(PLAN, lease);
    await journal.set(0, { state: 'started', at: 1, writes: [] });
    // As if Redis had been away longer than the lease.
    await redis!.del(`${prefix}:repair:plan:${PLAN}:lease`);
    await expect(journal.set(1, { state: 'started', at: 2, writes: [] })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await journal.get(1)).toBeUndefined();
    expect(lease.lost).toBe(true);
    // Another run takes it now; the first one stays out even though the key is back.
    keep(await plans.lease(PLAN, { ttlMs: 2_000 }));
    await expect(lease.check()).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('a run whose BullMQ job lock went to another run is fenced out too', async () => {
    const plans = store();
    const lockKey = `${prefix}:fix-macs:job1:lock`;
    await redis!.set(lockKey, 'worker-a:1');
    const lease = keep(await plans.lease(PLAN, { ttlMs: 2_000, jobLock: { key: lockKey, token: 'worker-a:1' } }));
    await lease.check();
    await redis!.set(lockKey, 'worker-b:7');
    await expect(lease.check()).rejects.toThrow(/job lock/);
  });
});

describe('the write guard', () => {
  it('journals each write sending, then its outcome, under the run token', async () => {
    const plans = store();
    const lease = keep(await plans.lease(PLAN, { ttlMs: 2_000 }));
    const journal = plans.journal(PLAN, lease);
    const writer = stepWriter({ journal, index: 0, entry: undefined, token: lease.token, at: Date.now });
    let seenWhileSending: unknown;
    await writer.write('markBroken', async () => {
      seenWhileSending = await journal.get(0);
      return 'ok';
    });
    expect(seenWhileSending).toMatchObject({ state: 'started', writes: [{ name: 'markBroken', run: lease.token, state: 'sending' }] });
    expect(await journal.get(0)).toMatchObject({ writes: [{ name: 'markBroken', run: lease.token, state: 'answered' }] });
    await expect(writer.write('updateInterfaceMac', () => Promise.reject(Object.assign(new Error('409'), { status: 409 })), { idempotent: true })).rejects.toThrow('409');
    expect(await journal.get(0)).toMatchObject({ writes: [{ state: 'answered' }, { name: 'updateInterfaceMac', state: 'refused' }] });
  });

  it("an earlier run's unproven non-idempotent write is never sent again; an idempotent one, or one MAAS refused, may be", async () => {
    const plans = store();
    const lease = keep(await plans.lease(PLAN, { ttlMs: 2_000 }));
    const journal = plans.journal(PLAN, lease);
    const sent: string[] = [];
    const send = (name: string) => async () => void sent.push(name);
    const writer = stepWriter({
      journal,
      index: 0,
      entry: { state: 'started', at: 1, writes: [{ name: 'markBroken', run: lease.token - 1, state: 'sending' }, { name: 'commission', run: lease.token - 1, state: 'refused' }] },
      token: lease.token,
      at: Date.now,
    });
    expect(writer.resumed).toBe(true);
    await expect(writer.write('markBroken', send('markBroken'))).rejects.toBeInstanceOf(UnprovenWriteError);
    await writer.write('commission', send('commission'));
    await writer.write('updateSubnetDns', send('updateSubnetDns'), { idempotent: true });
    expect(sent).toEqual(['commission', 'updateSubnetDns']);

    // Journaled before writes were recorded: anything may have been sent.
    const legacy = stepWriter({ journal, index: 1, entry: { state: 'started', at: 1 }, token: lease.token, at: Date.now });
    expect(legacy.resumed).toBe(true);
    await expect(legacy.write('rack.forwarderInstall', send('install'))).rejects.toBeInstanceOf(UnprovenWriteError);
    expect(stepWriter({ journal, index: 2, entry: { state: 'started', at: 1, writes: [] }, token: lease.token, at: Date.now }).resumed).toBe(false);
  });

  it('fenced adapters: MAAS reads pass, a write goes through the current step guard, and a write outside a step is refused', async () => {
    const calls: string[] = [];
    const maas = {
      getMachine: async () => void calls.push('getMachine'),
      markBroken: async () => void calls.push('markBroken'),
      updateInterfaceMac: async () => void calls.push('updateInterfaceMac'),
    } as unknown as MaasClient;
    const route: WriteRoute = {};
    const adapters = fencedAdapters({ maas: () => maas, kube: () => ({}) as never, ssh: { connect: () => Promise.reject(new Error('no')) } } as Adapters, route);
    const client = adapters.maas('region-a');
    await expect(client.markBroken('sb0001')).rejects.toThrow(/only inside a journaled step/);
    await client.getMachine('sb0001');
    const guarded: string[] = [];
    route.current = async (name, send, options) => {
      guarded.push(`${name}${options?.idempotent ? ' (idempotent)' : ''}`);
      return send();
    };
    await client.markBroken('sb0001');
    await client.updateInterfaceMac('sb0001', 1, '52:54:00:00:00:01');
    expect(guarded).toEqual(['markBroken', 'updateInterfaceMac (idempotent)']);
    expect(calls).toEqual(['getMachine', 'markBroken', 'updateInterfaceMac']);
  });
});

describe('the execute job of an approval', () => {
  it('queued twice for one approval, BullMQ keeps one job; approved again later, it gets a new one', async () => {
    store();
    const producer = createRedis(TEST_REDIS_URL, 'producer');
    const queues = new JobQueues(producer, createRedactor([]), prefix);
    try {
      const data = { planId: PLAN, approvedBy: 'U0LEAD2' };
      const a = await queues.enqueue(REPAIR_EXECUTE_JOB, data, { jobId: executionJobId(PLAN, 1_700_000_000_000) });
      const b = await queues.enqueue(REPAIR_EXECUTE_JOB, data, { jobId: executionJobId(PLAN, 1_700_000_000_000) });
      expect(b).toBe(a);
      expect(await queues.queue(REPAIR_EXECUTE_JOB).getJobCounts('waiting')).toEqual({ waiting: 1 });
      const c = await queues.enqueue(REPAIR_EXECUTE_JOB, data, { jobId: executionJobId(PLAN, 1_700_000_100_000) });
      expect(c).not.toBe(a);
    } finally {
      await queues.close();
      producer.disconnect();
    }
  });
});
