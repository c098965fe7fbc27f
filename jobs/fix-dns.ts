import type { ClusterConfig } from '../src/config.ts';
import { dnsStepRunner } from '../src/repair/dns-steps.ts';
import { planDnsRepair } from '../src/repair/dns-planner.ts';
import { gatherDnsSnapshot } from './dns-check.ts';
import { runRepairJob, type RepairDefinition } from './execute-plan.ts';
import type { JobDefinition } from './types.ts';

/** fix-dns: put the running control plane's IPs back on the API server record and align the hash cache (FACTS.md section 1). */
export const fixDnsRepair: RepairDefinition = {
  kind: 'fix-dns',
  targetKind: 'cluster',
  plan: async (ctx, name) => planDnsRepair(await gatherDnsSnapshot(ctx, ctx.config.clusters[name] as ClusterConfig)),
  runner: (ctx, name) => {
    const cluster = ctx.config.clusters[name] as ClusterConfig;
    return dnsStepRunner(ctx.adapters.maas(cluster.maas), ctx.adapters.kube(cluster));
  },
};

/** `/maas fix-dns <cluster>` and `maas-chatops fix-dns <cluster> [--apply]`. */
export const fixDnsJob: JobDefinition = {
  name: 'fix-dns',
  run: (ctx, data) => runRepairJob(ctx, data, fixDnsRepair),
};
