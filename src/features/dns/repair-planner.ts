import { apiServerFqdn, computeDesiredSet, dnsHash, evaluateDns, isCustomDns, lastAppliedHash, recordedIpsOf, type DnsSnapshot } from './evaluate.ts';
import { LAST_APPLIED_DNS_HASH_ANNOTATION } from '../../adapters/kube/capmaas.ts';
import type { DnsResource } from '../../adapters/maas/types.ts';
import type { DnsStep } from '../../engine/repair/plan-step.ts';
import { withId, type RepairPlan } from '../../engine/repair/plan.ts';

/**
 * Pure: a fresh dns-check snapshot in, the fix-dns plan out. PUT the running control plane's set
 * on the API server record, then store the controller's hash of that set in the MaasCluster's
 * annotation so the cache agrees with MAAS. Never an empty set, never a guess between records.
 */
export function planDnsRepair(snapshot: DnsSnapshot): RepairPlan {
  const { findings, verdict: checkVerdict } = evaluateDns(snapshot);
  const draft = { kind: 'fix-dns' as const, target: snapshot.cluster, findings };
  const nothing = (why: string): RepairPlan => withId({ ...draft, steps: [], refusals: [], verdict: `Nothing to repair for ${snapshot.cluster}: ${why}` });
  const refuse = (reason: string): RepairPlan =>
    withId({
      ...draft,
      steps: [],
      refusals: [{ subject: subjectOf(snapshot), action: 'set-dns-ips', outcome: 'refused', detail: reason }],
      verdict: `Refused for ${snapshot.cluster}: ${reason}`,
    });

  const maasCluster = snapshot.maasCluster;
  if (!maasCluster) return refuse('the MaasCluster could not be read; see the finding');
  if (isCustomDns(maasCluster)) return nothing('the controller manages no DNS for this cluster (custom-dns-provided)');
  const fqdn = apiServerFqdn(maasCluster);
  if (!fqdn) return refuse('the MaasCluster names no API server FQDN yet');
  if ('error' in snapshot.dns) return refuse(`MAAS could not be asked for ${fqdn}: ${snapshot.dns.error}`);
  const resources = snapshot.dns.resources;
  if (resources.length === 0) {
    return refuse(`MAAS has no DNS resource for ${fqdn}: the controller creates it; fix-dns only corrects an existing record`);
  }
  if (resources.length > 1) {
    return refuse(`MAAS holds ${resources.length} DNS resources for ${fqdn} (ids ${resources.map((r) => r.id).join(', ')}): fix-dns will not pick one; delete the extras in MAAS first`);
  }
  const resource = resources[0] as DnsResource;
  const desired = computeDesiredSet(snapshot.machines, snapshot.preferredSubnets);
  if (desired.ips.length === 0) {
    return refuse(
      desired.existingCount === 0
        ? 'no control-plane machine exists: there is no set to restore, and an empty set is never written'
        : 'no running control-plane machine has an IP in the preferred subnets: the desired set is empty, and an empty set is never written (it would wipe the record)',
    );
  }
  const recorded = recordedIpsOf(resource);
  const hash = dnsHash(desired.ips);
  const annotation = lastAppliedHash(maasCluster);
  const recordRight = sameIpSet(recorded, desired.ips);
  const steps: DnsStep[] = [];
  if (!recordRight) {
    steps.push({
      subject: fqdn,
      action: 'set-dns-ips',
      detail: `MAAS DNS resource ${resource.id}: ${recorded.join(', ') || '(empty)'} → ${desired.ips.join(', ')} (the running control plane)`,
      params: { resourceId: resource.id, fqdn, from: recorded, to: desired.ips },
    });
  }
  if (!recordRight || (annotation !== null && annotation !== hash && !desired.hashes.includes(annotation))) {
    const ref = snapshot.maasClusterRef;
    steps.push({
      subject: fqdn,
      action: 'set-dns-hash',
      detail: `MaasCluster ${ref.namespace}/${ref.name} ${LAST_APPLIED_DNS_HASH_ANNOTATION}: ${shortHash(annotation)} → ${shortHash(hash)} (the controller's hash of ${desired.ips.join(', ')})`,
      params: { namespace: ref.namespace, maasCluster: ref.name, fqdn, from: annotation, to: hash, ips: desired.ips },
    });
  }
  if (!steps.length) return nothing(checkVerdict);
  return withId({
    ...draft,
    steps,
    refusals: [],
    verdict: recordRight
      ? `Plan: refresh the controller's hash cache for ${fqdn} (the record already holds ${desired.ips.join(', ')})`
      : `Plan: put ${desired.ips.join(', ')} back on ${fqdn} and store its hash on the MaasCluster`,
  });
}

function subjectOf(snapshot: DnsSnapshot): string {
  return (snapshot.maasCluster && apiServerFqdn(snapshot.maasCluster)) || snapshot.cluster;
}

export function sameIpSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export function shortHash(hash: string | null): string {
  return hash === null ? '(absent)' : `${hash.slice(0, 12)}…`;
}
