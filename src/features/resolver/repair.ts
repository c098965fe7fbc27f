import { requireAdmin } from '../../adapters/maas/api-user.ts';
import { gatherSiteResolver } from './node-facing.ts';
import { configRefusal, planResolverRepair, type ResolverRepairInput } from './repair-planner.ts';
import { DEFAULT_COMMISSION_POLL_MS, DEFAULT_COMMISSION_TIMEOUT_MS } from '../../engine/repair/follow-commissioning.ts';
import { lookUpCanary } from './repair-canary.ts';
import { resolverStepRunner } from './repair-steps.ts';
import { adminGuarded } from '../../engine/repair/admin-guard.ts';
import type { RepairSpec } from '../../engine/repair/repair-spec.ts';
import type { JobContext } from '../../engine/job-types.ts';
import { resolveTarget } from '../../core/targets.ts';

/** A fresh resolver-check of the site, as fix-resolver plans from it: dig on the rack for the resolver and the forwarder, and MAAS's subnet. */
export async function gatherResolverRepair(ctx: JobContext, name: string): Promise<ResolverRepairInput> {
  const site = resolveTarget(ctx.config, 'site', name);
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
export const fixResolverRepair: RepairSpec = {
  kind: 'fix-resolver',
  targetKind: 'site',
  plan: async (ctx, site) => {
    // Before any dig on the rack or forwarderInstall: the subnet PUT at the end needs an admin.
    const maasRegion = resolveTarget(ctx.config, 'site', site).maas;
    await requireAdmin(ctx.adapters.maas(maasRegion), maasRegion, 'fix-resolver');
    return planResolverRepair(await gatherResolverRepair(ctx, site));
  },
  runner: (ctx, site, progress) => {
    const config = resolveTarget(ctx.config, 'site', site);
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

