import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { planReport, withId, type RepairPlan } from '../../src/engine/repair/plan.ts';
import { createPlanStore, type PlanStore } from '../../src/engine/repair/plan-store.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// The approval state lives in real Redis: these are the transitions every click relies on.

let redis: Redis;
let other: Redis;
let prefix: string;
let store: PlanStore;

beforeEach(() => {
  prefix = freshPrefix('plan-store');
  redis = createRedis(TEST_REDIS_URL, 'producer');
  other = createRedis(TEST_REDIS_URL, 'producer');
  store = createPlanStore(redis, { prefix });
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  other.disconnect();
});

function plan(ip = '10.11.135.36'): RepairPlan {
  return withId({
    kind: 'fix-dns',
    target: 'prod',
    steps: [{ subject: 'prod-k8s.maas.example', action: 'set-dns-ips', detail: 'x', params: { resourceId: 41, from: [], to: [ip] } }],
    refusals: [],
    findings: [],
    verdict: 'Plan',
  });
}

async function stored(p: RepairPlan, now = Date.now(), ttlMs = 60_000) {
  return store.create({ plan: p, report: planReport(p, new Date(now)), requester: 'U0OPS1', channel: 'C0OPS', now, ttlMs });
}

describe('plan store on real Redis', () => {
  it('lets exactly one of many concurrent approvals through, from two connections', async () => {
    const p = plan();
    await stored(p);
    const second = createPlanStore(other, { prefix });
    const now = Date.now();
    const answers = await Promise.all(Array.from({ length: 20 }, (_v, i) => (i % 2 ? store : second).decide(p.id, 'approved', `U${i}`, now)));
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
    expect(answers.filter((a) => !a.ok && a.why === 'decided')).toHaveLength(19);
    const after = await store.get(p.id);
    expect(after?.state).toBe('approved');
    expect(answers.findIndex((a) => a.ok)).toBe(Number(after?.decidedBy?.slice(1)));
  });

  it('expires: a decision after expiresAt is refused and the plan is marked expired', async () => {
    const p = plan();
    const now = Date.now();
    await stored(p, now, 1_000);
    expect(await store.decide(p.id, 'approved', 'U0LEAD1', now + 1_001)).toEqual({ ok: false, why: 'expired' });
    expect((await store.get(p.id))?.state).toBe('expired');
    expect(await store.decide(p.id, 'approved', 'U0LEAD1', now)).toMatchObject({ ok: false, why: 'decided', state: 'expired' });
  });

  it('keeps a plan that is still pending, and replaces a finished one (its journal cleared)', async () => {
    const p = plan();
    expect(await stored(p)).toEqual({ created: true });
    expect(await stored(p)).toMatchObject({ created: false, existing: { state: 'pending', requester: 'U0OPS1' } });
    await store.decide(p.id, 'approved', 'U0LEAD1', Date.now());
    await store.journal(p.id).begin();
    await store.setState(p.id, 'done', []);
    expect(await stored(p)).toEqual({ created: true });
    expect((await store.get(p.id))?.state).toBe('pending');
    expect(await store.journal(p.id).hasBegun()).toBe(false);
  });

  it('a missing plan is missing; an undone approval is pending again', async () => {
    expect(await store.decide('0123456789abcdef', 'approved', 'U0LEAD1', Date.now())).toEqual({ ok: false, why: 'missing' });
    const p = plan('10.11.135.40');
    await stored(p);
    await store.decide(p.id, 'approved', 'U0LEAD1', Date.now());
    await store.undoApproval(p.id, 'U0LEAD2');
    expect((await store.get(p.id))?.state).toBe('approved');
    await store.undoApproval(p.id, 'U0LEAD1');
    expect((await store.get(p.id))?.state).toBe('pending');
  });

  it('starts an approved plan once: a second start, or an undo after the start, is refused', async () => {
    const p = plan();
    await stored(p);
    await store.decide(p.id, 'approved', 'U0LEAD1', Date.now());
    const starts = await Promise.all([store.startExecution(p.id), createPlanStore(other, { prefix }).startExecution(p.id)]);
    // Both may see "executing, journal not begun" only until the winner begins its journal.
    expect(starts.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    await store.journal(p.id).begin();
    expect(await store.startExecution(p.id)).toBe(false);
    expect(await store.undoApproval(p.id, 'U0LEAD1')).toBe(false);
    expect((await store.get(p.id))?.state).toBe('executing');
  });

  it('an approval taken back before any worker started it cannot be started', async () => {
    const p = plan();
    await stored(p);
    await store.decide(p.id, 'approved', 'U0LEAD1', Date.now());
    expect(await store.undoApproval(p.id, 'U0LEAD1')).toBe(true);
    expect(await store.startExecution(p.id)).toBe(false);
    expect((await store.get(p.id))?.state).toBe('pending');
  });
});
