import type { SiteConfig } from '../src/config.ts';
import { apiUserOf } from '../src/maas/api-user.ts';
import { macStepRunner } from '../src/repair/mac-steps.ts';
import { planMacRepair } from '../src/repair/mac-planner.ts';
import { adminGuarded } from '../src/repair/admin-guard.ts';
import { REPAIR_LOCK, runRepairJob, type RepairDefinition } from './execute-plan.ts';
import { gatherMacSnapshot } from './mac-diff.ts';
import type { JobDefinition } from './types.ts';

/** fix-macs: update MAAS's interface records to the live MACs, machine by machine (FACTS.md sections 2 and 3). */
export const fixMacsRepair: RepairDefinition = {
  kind: 'fix-macs',
  targetKind: 'site',
  plan: async (ctx, site) => {
    const maas = ctx.adapters.maas((ctx.config.sites[site] as SiteConfig).maas);
    const snapshot = await gatherMacSnapshot(ctx, site, { command: 'fix-macs' });
    return planMacRepair(snapshot, { maxSubjects: ctx.config.repair.maxSubjects, apiUser: await apiUserOf(maas) });
  },
  runner: (ctx, site) => {
    const region = (ctx.config.sites[site] as SiteConfig).maas;
    const maas = ctx.adapters.maas(region);
    return adminGuarded(macStepRunner(maas), maas, region, 'fix-macs');
  },
};

/** `/maas fix-macs <site>` and `maas-chatops fix-macs <site> [--apply]`. */
export const fixMacsJob: JobDefinition = {
  name: 'fix-macs',
  lock: REPAIR_LOCK,
  run: (ctx, data) => runRepairJob(ctx, data, fixMacsRepair),
};
