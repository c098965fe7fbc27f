import type { SiteConfig } from '../src/config.ts';
import { apiUserOf } from '../src/maas/api-user.ts';
import { DEFAULT_COMMISSION_POLL_MS, DEFAULT_COMMISSION_TIMEOUT_MS } from '../src/repair/follow-commissioning.ts';
import { macStepRunner } from '../src/features/macs/repair-steps.ts';
import { planMacRepair } from '../src/features/macs/repair-planner.ts';
import { adminGuarded } from '../src/repair/admin-guard.ts';
import { REPAIR_LOCK, runRepairJob, type RepairDefinition } from './execute-plan.ts';
import { gatherMacSnapshot } from '../src/features/macs/gather.ts';
import type { JobDefinition } from '../src/job-types.ts';

/** fix-macs: update MAAS's interface records to the live MACs, machine by machine. */
export const fixMacsRepair: RepairDefinition = {
  kind: 'fix-macs',
  targetKind: 'site',
  plan: async (ctx, site) => {
    const maas = ctx.adapters.maas((ctx.config.sites[site] as SiteConfig).maas);
    const snapshot = await gatherMacSnapshot(ctx, site, { command: 'fix-macs' });
    // Which states take an interface edit depends on the version (New from 3.3).
    const [apiUser, version] = await Promise.all([apiUserOf(maas), maas.version().catch(() => undefined)]);
    return planMacRepair(snapshot, { maxSubjects: ctx.config.repair.maxSubjects, apiUser, ...(version ? { maasVersion: version.version } : {}) });
  },
  runner: (ctx, site, progress) => {
    const region = (ctx.config.sites[site] as SiteConfig).maas;
    const maas = ctx.adapters.maas(region);
    const follow = {
      timeoutMs: ctx.config.repair.commissionTimeoutMs ?? DEFAULT_COMMISSION_TIMEOUT_MS,
      pollMs: ctx.config.repair.commissionPollMs ?? DEFAULT_COMMISSION_POLL_MS,
      ...(ctx.clock ? { now: ctx.clock.now, sleep: ctx.clock.sleep } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    };
    return adminGuarded(macStepRunner(maas, { follow, ...(progress ? { progress } : {}) }), maas, region, 'fix-macs');
  },
};

/** `/maas fix-macs <site>` and `maas-chatops fix-macs <site> [--apply]`. */
export const fixMacsJob: JobDefinition = {
  name: 'fix-macs',
  lock: REPAIR_LOCK,
  run: (ctx, data) => runRepairJob(ctx, data, fixMacsRepair),
};
