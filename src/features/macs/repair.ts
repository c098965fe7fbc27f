import { apiUserOf } from '../../adapters/maas/api-user.ts';
import { DEFAULT_COMMISSION_POLL_MS, DEFAULT_COMMISSION_TIMEOUT_MS } from '../../engine/repair/follow-commissioning.ts';
import { macStepRunner } from './repair-steps.ts';
import { planMacRepair } from './repair-planner.ts';
import { commissionPreflight, type CommissionPreflight } from './commission-preflight.ts';
import { adminGuarded } from '../../engine/repair/admin-guard.ts';
import type { RepairSpec } from '../../engine/repair/repair-spec.ts';
import { gatherMacSnapshot } from './gather.ts';
import { resolveTarget } from '../../core/targets.ts';

/** fix-macs: update MAAS's interface records to the live MACs, machine by machine. */
export const fixMacsRepair: RepairSpec = {
  kind: 'fix-macs',
  targetKind: 'site',
  plan: async (ctx, site, batch) => {
    const maas = ctx.adapters.maas(resolveTarget(ctx.config, 'site', site).maas);
    const snapshot = await gatherMacSnapshot(ctx, site, { command: 'fix-macs' });
    // Which states take an interface edit depends on the version (New from 3.3).
    const [apiUser, version] = await Promise.all([apiUserOf(maas), maas.version().catch(() => undefined)]);
    const options = { maxSubjects: ctx.config.repair.maxSubjects, apiUser, ...(version ? { maasVersion: version.version } : {}), ...(batch ? { batch } : {}) };
    const plan = planMacRepair(snapshot, options);
    // Only a plan that would commission asks MAAS whether it can: refused machines are then left alone, with why.
    if (!plan.steps.some((s) => s.action === 'commission')) return plan;
    return planMacRepair(snapshot, { ...options, commissioning: await commissionPreflight(maas, apiUser) });
  },
  runner: (ctx, site, progress) => {
    const region = resolveTarget(ctx.config, 'site', site).maas;
    const maas = ctx.adapters.maas(region);
    const follow = {
      timeoutMs: ctx.config.repair.commissionTimeoutMs ?? DEFAULT_COMMISSION_TIMEOUT_MS,
      pollMs: ctx.config.repair.commissionPollMs ?? DEFAULT_COMMISSION_POLL_MS,
      ...(ctx.clock ? { now: ctx.clock.now, sleep: ctx.clock.sleep } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    };
    // Asked once per run, before the first mark_broken: images do not come and go between two machines of one plan.
    let preflight: Promise<CommissionPreflight> | undefined;
    const commissionPreflightNow = () => (preflight ??= apiUserOf(maas).then((user) => commissionPreflight(maas, user), () => commissionPreflight(maas, undefined)));
    return adminGuarded(macStepRunner(maas, { follow, commissionPreflight: commissionPreflightNow, ...(progress ? { progress } : {}) }), maas, region, 'fix-macs');
  },
};

