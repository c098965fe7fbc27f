import { requireAdmin } from '../../adapters/maas/api-user.ts';
import { dnsStepRunner } from './repair-steps.ts';
import { planDnsRepair } from './repair-planner.ts';
import { gatherDnsSnapshot } from './gather.ts';
import { adminGuarded } from '../../engine/repair/admin-guard.ts';
import type { RepairSpec } from '../../engine/repair/repair-spec.ts';
import { resolveTarget } from '../../core/targets.ts';

/** fix-dns: put the running control plane's IPs back on the API server record and align the hash cache. */
export const fixDnsRepair: RepairSpec = {
  kind: 'fix-dns',
  targetKind: 'cluster',
  plan: async (ctx, name) => {
    const cluster = resolveTarget(ctx.config, 'cluster', name);
    await requireAdmin(ctx.adapters.maas(cluster.maas), cluster.maas, 'fix-dns');
    return planDnsRepair(await gatherDnsSnapshot(ctx, cluster));
  },
  runner: (ctx, name) => {
    const cluster = resolveTarget(ctx.config, 'cluster', name);
    const maas = ctx.adapters.maas(cluster.maas);
    return adminGuarded(dnsStepRunner(maas, ctx.adapters.kube(cluster)), maas, cluster.maas, 'fix-dns');
  },
};

