import { apiServerFqdn, isCustomDns, type ControllerObservation, type DnsSnapshot } from './evaluate.ts';
import type { ClusterConfig } from '../../core/config.ts';
import { askClientView } from './client-view.ts';
import { describeError } from '../../core/errors.ts';
import { CLUSTER_NAME_LABEL } from '../../adapters/kube/capmaas.ts';
import type { KubeClient, MaasClusterObject } from '../../adapters/kube/types.ts';
import { MaasApiError } from '../../adapters/maas/maas-api-error.ts';
import type { MaasClient } from '../../adapters/maas/types.ts';
import type { CheckContext } from '../check-spec.ts';

/**
 * Reads what the controller reads: the MaasCluster first (it names the FQDN and the CAPI
 * cluster), then in parallel its MaasMachines, the preferred subnets, the MAAS DNS resources
 * and the controller's image. A failed Kubernetes read throws (PROBE_FAILED for the target);
 * a failed MAAS read is kept in the snapshot so the machine findings still show.
 */
export async function gatherDnsSnapshot(ctx: CheckContext, cluster: ClusterConfig): Promise<DnsSnapshot> {
  const namespace = cluster.kube.namespace;
  const ref = { namespace, name: cluster.maasCluster };
  const kube = ctx.adapters.kube(cluster);
  const maasCluster = await kube.getMaasCluster(namespace, cluster.maasCluster);
  const base = { cluster: cluster.name, maasClusterRef: ref, maasCluster };
  const fqdn = maasCluster ? apiServerFqdn(maasCluster) : null;
  if (!maasCluster || isCustomDns(maasCluster) || !fqdn) {
    return { ...base, machines: [], preferredSubnets: null, preferredSubnetsSource: 'none', dns: { resources: [] } };
  }
  const [machines, preferred, dns, controller, clientView] = await Promise.all([
    kube.listMaasMachines(namespace, capiClusterName(maasCluster)),
    preferredSubnets(kube, cluster),
    dnsResources(ctx, cluster, fqdn),
    controllerImage(kube, cluster),
    cluster.clientView ? askClientView(fqdn, cluster.clientView, ctx.config, ctx.adapters.ssh) : undefined,
  ]);
  return { ...base, machines, ...preferred, dns, controller, ...(clientView ? { clientView } : {}) };
}

/** The machines carry the CAPI Cluster's name, which may differ from the MaasCluster's. */
export function capiClusterName(maasCluster: MaasClusterObject): string {
  const label = maasCluster.metadata.labels?.[CLUSTER_NAME_LABEL];
  const owner = maasCluster.metadata.ownerReferences?.find((o) => o.kind === 'Cluster')?.name;
  return label || owner || maasCluster.metadata.name;
}

async function preferredSubnets(
  kube: KubeClient,
  cluster: ClusterConfig,
): Promise<Pick<DnsSnapshot, 'preferredSubnets' | 'preferredSubnetsSource'>> {
  if (cluster.preferredSubnets) return { preferredSubnets: cluster.preferredSubnets, preferredSubnetsSource: 'config' };
  const fromConfigMap = await kube.getPreferredSubnets(cluster.kube.namespace);
  return fromConfigMap === null
    ? { preferredSubnets: null, preferredSubnetsSource: 'none' }
    : { preferredSubnets: fromConfigMap, preferredSubnetsSource: 'configmap' };
}

async function dnsResources(ctx: CheckContext, cluster: ClusterConfig, fqdn: string): Promise<DnsSnapshot['dns']> {
  try {
    const maas: MaasClient = ctx.adapters.maas(cluster.maas);
    return { resources: await maas.findDnsResources(fqdn) };
  } catch (err) {
    // MAAS answers 404 "No Domain matches the given query." for an FQDN in a domain it does not serve.
    if (err instanceof MaasApiError && err.status === 404 && /No Domain matches/.test(err.body)) return { resources: [], domainUnknown: true };
    return { error: describeError(err) };
  }
}

/** Optional: a Deployment we may not read must not fail the check. */
async function controllerImage(kube: KubeClient, cluster: ClusterConfig): Promise<ControllerObservation> {
  try {
    const image = await kube.getDeploymentImage(cluster.controller.namespace, cluster.controller.deployment);
    return image === null ? { absent: true } : { image };
  } catch (err) {
    return { error: describeError(err) };
  }
}
