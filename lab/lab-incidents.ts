import { LAST_APPLIED_DNS_HASH_ANNOTATION, MAAS_CLUSTER_PLURAL } from '../src/adapters/kube/capmaas.ts';
import { EMPTY_SET_HASH } from '../src/features/dns/dns-hash.ts';
import type { LabWorld } from './lab-world.ts';

/**
 * The API record wipe happening again, as an unpatched controller (v4.8.0–v4.9.1) does it: its control
 * plane flapped, it PUT the empty IP set on the API server's record in MAAS and cached the
 * empty set's hash on the MaasCluster. No command is typed: the bot has to notice.
 */
export function controllerWipesRecord(world: LabWorld, cluster: string, fqdn: string): void {
  const record = world.maas.state.dnsresources.find((r) => r.fqdn === fqdn);
  if (!record) throw new Error(`the lab's MAAS has no DNS resource ${fqdn}`);
  record.ip_addresses = [];
  const kube = world.kube[cluster];
  const maasCluster = kube?.state.maasClusters.find((c) => c.metadata.name === cluster);
  if (!kube || !maasCluster) throw new Error(`the lab has no MaasCluster ${cluster}`);
  const annotations = { ...maasCluster.metadata.annotations, [LAST_APPLIED_DNS_HASH_ANNOTATION]: EMPTY_SET_HASH };
  kube.apply(MAAS_CLUSTER_PLURAL, { ...maasCluster, metadata: { ...maasCluster.metadata, annotations } });
}

/**
 * The isolated rack's cause (regenerated MACs) happening again, one VM at a time: an OpenTofu replace undefines the VM and
 * defines it again with a NIC whose MAC it generated anew (no pinned `mac`). MAAS still holds
 * the old MAC. No command is typed: the VM host watch has to notice.
 */
export function opentofuReplacesVm(world: LabWorld, domain: string, newMac: string): void {
  const host = world.vmHosts.find((h) => h.state().domains.some((d) => d.name === domain));
  if (!host) throw new Error(`the lab has no VM host holding ${domain}`);
  host.redefine(domain, [{ mac: newMac }]);
}
