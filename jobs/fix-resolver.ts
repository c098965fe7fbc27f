import type { SiteConfig } from '../src/config.ts';
import { requireAdmin } from '../src/maas/api-user.ts';
import { gatherSiteResolver } from '../src/features/resolver/node-facing.ts';
import { configRefusal, planResolverRepair, type ResolverRepairInput } from '../src/features/resolver/repair-planner.ts';
import { DEFAULT_COMMISSION_POLL_MS, DEFAULT_COMMISSION_TIMEOUT_MS } from '../src/repair/follow-commissioning.ts';
import { lookUpCanary } from '../src/features/resolver/repair-canary.ts';
import { resolverStepRunner } from '../src/features/resolver/repair-steps.ts';
import { adminGuarded } from '../src/repair/admin-guard.ts';
import { REPAIR_LOCK, runRepairJob, type RepairDefinition } from './execute-plan.ts';
import type { JobContext, JobDefinition } from '../src/job-types.ts';

/** A fresh resolver-check of the site, as fix-resolver plans from it: dig on the rack for the resolver and the forwarder, and MAAS's subnet. */
export async function gatherResolverRepair(ctx: JobContext, name: string): Promise<ResolverRepairInput> {
  const site = ctx.config.sites[name] as SiteConfig;
  const input: ResolverRepairInput = { site: name, ...(site.rack ? { rack: site.rack } : {}) };
  if (configRefusal(name, site.rack) !== null) return input;
  const canary = site.rack?.canary;
  const [gathered, canaryLookup] = await Promise.all([
    gatherSiteResolver(site, ctx.adapters, { probeForwarder: 'always', via: 'ssh' }),
    canary ? lookUpCanary(ctx.adapters.maas(site.maas), canary) : undefined,
  ]);
  return { ...input, gathered, ...(canaryLookup ? { canary: canaryLookup } : {}) };
}

/** fix-resolver: a forwarder on the rack, verified, then MAAS's node-facing subnet pointed at it. */
export const fixResolverRepair: RepairDefinition = {
  kind: 'fix-resolver',
  targetKind: 'site',
  plan: async (ctx, site) => {
    // Before any dig on the rack or forwarderInstall: the subnet PUT at the end needs an admin.
    const maasRegion = (ctx.config.sites[site] as SiteConfig).maas;
    await requireAdmin(ctx.adapters.maas(maasRegion), maasRegion, 'fix-resolver');
    return planResolverRepair(await gatherResolverRepair(ctx, site));
  },
  runner: (ctx, site, progress) => {
    const config = ctx.config.sites[site] as SiteConfig;
    // The canary is followed as fix-macs follows a re-commissioning: the same bound, poll and clock.
    const canary = {
      timeoutMs: ctx.config.repair.commissionTimeoutMs ?? DEFAULT_COMMISSION_TIMEOUT_MS,
      pollMs: ctx.config.repair.commissionPollMs ?? DEFAULT_COMMISSION_POLL_MS,
      ...(ctx.clock ? { now: ctx.clock.now, sleep: ctx.clock.sleep } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(progress ? { progress } : {}),
    };
    return adminGuarded(resolverStepRunner(config, ctx.adapters, { canary }), ctx.adapters.maas(config.maas), config.maas, 'fix-resolver');
  },
};

/** `/maas fix-resolver <site>` and `maas-chatops fix-resolver <site> [--apply]`. */
export const fixResolverJob: JobDefinition = {
  name: 'fix-resolver',
  lock: REPAIR_LOCK,
  run: (ctx, data) => runRepairJob(ctx, data, fixResolverRepair),
};
