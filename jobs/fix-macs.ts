import type { SiteConfig } from '../src/config.ts';
import { macStepRunner } from '../src/repair/mac-steps.ts';
import { planMacRepair } from '../src/repair/mac-planner.ts';
import { runRepairJob, type RepairDefinition } from './execute-plan.ts';
import { gatherMacSnapshot } from './mac-diff.ts';
import type { JobDefinition } from './types.ts';

/** fix-macs: update MAAS's interface records to the live MACs, machine by machine (FACTS.md sections 2 and 3). */
export const fixMacsRepair: RepairDefinition = {
  kind: 'fix-macs',
  targetKind: 'site',
  plan: async (ctx, site) => {
    const maas = ctx.adapters.maas((ctx.config.sites[site] as SiteConfig).maas);
    const [snapshot, apiUser] = await Promise.all([gatherMacSnapshot(ctx, site), maas.whoami().catch(() => undefined)]);
    return planMacRepair(snapshot, { maxSubjects: ctx.config.repair.maxSubjects, ...(apiUser ? { apiUser } : {}) });
  },
  runner: (ctx, site) => macStepRunner(ctx.adapters.maas((ctx.config.sites[site] as SiteConfig).maas)),
};

/** `/maas fix-macs <site>` and `maas-chatops fix-macs <site> [--apply]`. */
export const fixMacsJob: JobDefinition = {
  name: 'fix-macs',
  run: (ctx, data) => runRepairJob(ctx, data, fixMacsRepair),
};
