import type { ClusterConfig } from '../src/config.ts';
import { requireAdmin } from '../src/maas/api-user.ts';
import { dnsStepRunner } from '../src/features/dns/repair-steps.ts';
import { planDnsRepair } from '../src/features/dns/repair-planner.ts';
import { gatherDnsSnapshot } from '../src/features/dns/gather.ts';
import { adminGuarded } from '../src/repair/admin-guard.ts';
import { REPAIR_LOCK, runRepairJob, type RepairDefinition } from './execute-plan.ts';
import type { JobDefinition } from '../src/job-types.ts';

/** fix-dns: put the running control plane's IPs back on the API server record and align the hash cache. */
export const fixDnsRepair: RepairDefinition = {
  kind: 'fix-dns',
  targetKind: 'cluster',
  plan: async (ctx, name) => {
    const cluster = ctx.config.clusters[name] as ClusterConfig;
    await requireAdmin(ctx.adapters.maas(cluster.maas), cluster.maas, 'fix-dns');
    return planDnsRepair(await gatherDnsSnapshot(ctx, cluster));
  },
  runner: (ctx, name) => {
    const cluster = ctx.config.clusters[name] as ClusterConfig;
    const maas = ctx.adapters.maas(cluster.maas);
    return adminGuarded(dnsStepRunner(maas, ctx.adapters.kube(cluster)), maas, cluster.maas, 'fix-dns');
  },
};

/** `/maas fix-dns <cluster>` and `maas-chatops fix-dns <cluster> [--apply]`. */
export const fixDnsJob: JobDefinition = {
  name: 'fix-dns',
  lock: REPAIR_LOCK,
  run: (ctx, data) => runRepairJob(ctx, data, fixDnsRepair),
};
