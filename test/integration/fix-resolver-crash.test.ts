import type { Redis } from 'ioredis';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executeRepairJob } from '../../jobs/repair-execute.ts';
import { fixResolverRepair } from '../../src/features/resolver/repair.ts';
import { probeSoaDirect } from '../../src/features/resolver/soa-direct.ts';
import { onPath } from '../../lab/rack-sim/index.ts';
import type { Notifier } from '../../src/engine/notifier.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import type { RepairPlan } from '../../src/engine/repair/plan.ts';
import { planReport } from '../../src/engine/repair/plan.ts';
import { createPlanStore, type PlanStore } from '../../src/engine/repair/plan-store.ts';
import { startCrashWorker } from '../helpers/crash-worker.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { startResolverSite, type ResolverSite, type ResolverSiteOptions } from './fix-resolver-site.ts';

// rack.forwarderInstall runs at most once per plan, whatever happens to the worker: the journal in
// (real) Redis says the step began, and a resumed install checks the forwarder instead of running
// the command again. Real parts: SSH to /bin/sh, dig, dnsmasq (daemon started by the install), the
// MAAS simulator, Redis, a child process killed with SIGKILL.


beforeAll(() => {
  for (const program of ['dig', 'dnsmasq']) {
    if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq`);
  }
});

let s: ResolverSite | undefined;
let redis: Redis | undefined;
let prefix = '';
afterEach(async () => {
  await s?.close();
  if (redis) await deletePrefix(redis, prefix);
  redis?.disconnect();
  s = undefined;
  redis = undefined;
});

interface Approved {
  site: ResolverSite;
  plans: PlanStore;
  plan: RepairPlan;
}

async function approvedPlan(options: ResolverSiteOptions): Promise<Approved> {
  // The journal of the install step is the subject here: a rack without a dhcpd.conf keeps check-dhcp out of the plan.
  s = await startResolverSite({ dhcp: 'none', ...options });
  prefix = freshPrefix('fix-resolver-crash');
  redis = createRedis(TEST_REDIS_URL, 'worker');
  const plans = createPlanStore(redis, { prefix });
  const plan = await fixResolverRepair.plan(s.ctx, 'site-b');
  expect(plan.steps.map((x) => x.action)).toEqual(['install-forwarder', 'verify-forwarder', 'set-subnet-dns', 'check-resolver']);
  await plans.create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel: 'C0OPS', now: Date.now(), ttlMs: 60_000 });
  await plans.setMessage(plan.id, '1700000000.000200');
  expect(await plans.decide(plan.id, 'approved', 'U0LEAD2', Date.now())).toEqual({ ok: true });
  return { site: s, plans, plan };
}

function threadNotifier(lines: string[]): Notifier {
  return {
    postReports: async () => undefined,
    postError: async () => undefined,
    postPlan: async (t) => ({ channel: t.channel, ts: '1' }),
    updatePlan: async () => undefined,
    postInThread: async (_r, text) => void lines.push(text),
  };
}

const execute = (a: Approved, thread: string[]) =>
  executeRepairJob.run({ ...a.site.ctx, plans: a.plans, notifier: threadNotifier(thread) }, { planId: a.plan.id, approvedBy: 'U0LEAD2' });

describe('fix-resolver: the install step and the journal', () => {
  it('SIGKILL after forwarderInstall took effect but before it returned: the restart does not run it again and finishes the plan', async () => {
    // The install starts the daemon, then keeps the SSH command open: the worker dies inside the step.
    const a = await approvedPlan({ forwarder: 'stopped', install: (daemon) => `${daemon} && sleep 20` });
    const worker = startCrashWorker({ configText: a.site.yaml, configEnv: a.site.env, prefix, planId: a.plan.id });
    const forwarderUp = async () => {
      const seen = await probeSoaDirect({ host: '127.0.0.1', port: a.site.forwarderPort }, 'maas-internal', { timeoutMs: 200, tries: 1 });
      return seen.outcome === 'reply' && seen.status === 'NOERROR' && a.site.installs().length === 1;
    };
    expect(await worker.killWhen(forwarderUp, 'the forwarder coming up', 20)).toBe('SIGKILL');

    const journal = a.plans.journal(a.plan.id);
    expect(await journal.hasBegun()).toBe(true);
    expect(await journal.get(0)).toMatchObject({ state: 'started' });
    expect(a.site.writes()).toEqual([]);

    const thread: string[] = [];
    const [report] = await execute(a, thread);
    expect(report?.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual([
      'install-forwarder verified',
      'verify-forwarder verified',
      'set-subnet-dns verified',
      'check-resolver verified',
    ]);
    expect(report?.results?.[0]?.detail).toMatch(/answers: the install started before the restart took effect; not run again/);
    expect(thread[0]).toMatch(/^Resuming after a restart/);
    expect(a.site.installs()).toHaveLength(1);
    expect(a.site.writes()).toHaveLength(1);
    expect((await a.plans.get(a.plan.id))?.state).toBe('done');

    // Handed out once more after it finished: reported from the store, nothing run again.
    const [again] = await execute(a, []);
    expect(again?.results).toEqual(report?.results);
    expect(a.site.installs()).toHaveLength(1);
    expect(a.site.writes()).toHaveLength(1);
  }, 60_000);

  it('a journal that shows the install started and a forwarder still silent: not run a second time, the plan stops, MAAS untouched', async () => {
    const a = await approvedPlan({ forwarder: 'stopped', install: 'daemon' });
    const journal = a.plans.journal(a.plan.id);
    await journal.begin();
    await a.plans.setState(a.plan.id, 'executing');
    await journal.set(0, { state: 'started', at: Date.now() });
    const [report] = await execute(a, []);
    expect(report?.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['install-forwarder failed', 'verify-forwarder skipped', 'set-subnet-dns skipped', 'check-resolver skipped']);
    expect(report?.results?.[0]?.detail).toMatch(/started before a restart .* still does not answer; it is not run a second time for one plan/);
    expect(a.site.installs()).toEqual([]);
    expect(a.site.writes()).toEqual([]);
  });

  it('a journal that shows the install done is believed: the command is not sent again, and a silent forwarder still stops the plan before MAAS', async () => {
    const a = await approvedPlan({ forwarder: 'stopped', install: 'daemon' });
    const journal = a.plans.journal(a.plan.id);
    await journal.begin();
    await a.plans.setState(a.plan.id, 'executing');
    await journal.set(0, { state: 'done', at: Date.now(), result: { subject: a.plan.steps[0]?.subject ?? '', action: 'install-forwarder', outcome: 'verified', detail: 'ran earlier' } });
    const [report] = await execute(a, []);
    expect(report?.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['install-forwarder verified', 'verify-forwarder failed', 'set-subnet-dns skipped', 'check-resolver skipped']);
    expect(a.site.installs()).toEqual([]);
    expect(a.site.writes()).toEqual([]);
  });
});
