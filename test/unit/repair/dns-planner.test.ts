import { describe, expect, it } from 'vitest';
import { dnsHash, EMPTY_SET_HASH, type DnsSnapshot } from '../../../src/features/dns/evaluate.ts';
import { maasClusterObject, maasMachineObject } from '../../../lab/kube-sim/index.ts';
import type { DnsResource } from '../../../src/adapters/maas/types.ts';
import { planDnsRepair } from '../../../src/features/dns/repair-planner.ts';

const FQDN = 'prod-k8s.maas.example';

function snapshot(options: { recorded?: string[]; resources?: DnsResource[]; cpIps?: string[]; powered?: boolean; annotation?: string | null } = {}): DnsSnapshot {
  const cpIps = options.cpIps ?? ['10.11.135.36'];
  const machines = cpIps.map((ip, i) =>
    maasMachineObject({ name: `prod-cp-${i}`, namespace: 'default', cluster: 'prod', controlPlane: true, systemId: `cp${i}`, zone: 'a', externalIps: [ip], hostname: `prod-cp-${i}`, ...(options.powered === false ? { powered: false } : {}) }),
  );
  const annotation = options.annotation === undefined ? EMPTY_SET_HASH : options.annotation;
  return {
    cluster: 'prod',
    maasClusterRef: { namespace: 'default', name: 'prod' },
    maasCluster: maasClusterObject({ name: 'prod', namespace: 'default', fqdn: FQDN, ...(annotation !== null ? { lastAppliedHash: annotation } : {}) }),
    machines,
    preferredSubnets: ['10.11.135.0/24'],
    preferredSubnetsSource: 'config',
    dns: { resources: options.resources ?? [{ id: 41, fqdn: FQDN, address_ttl: 10, ip_addresses: (options.recorded ?? []).map((ip) => ({ ip })) }] },
  };
}

describe('planDnsRepair', () => {
  it('the wiped record: PUT the running control plane, then its hash on the MaasCluster', () => {
    const plan = planDnsRepair(snapshot());
    expect(plan.steps.map((s) => [s.action, s.params])).toEqual([
      ['set-dns-ips', { resourceId: 41, fqdn: FQDN, from: [], to: ['10.11.135.36'] }],
      ['set-dns-hash', { namespace: 'default', maasCluster: 'prod', fqdn: FQDN, from: EMPTY_SET_HASH, to: dnsHash(['10.11.135.36']), ips: ['10.11.135.36'] }],
    ]);
    expect(plan.verdict).toBe(`Plan: put 10.11.135.36 back on ${FQDN} and store its hash on the MaasCluster`);
  });

  it('refuses an empty desired set: no step at all, the reason given', () => {
    const plan = planDnsRepair(snapshot({ powered: false }));
    expect(plan.steps).toEqual([]);
    expect(plan.refusals[0]?.detail).toMatch(/an empty set is never written/);
    expect(plan.verdict).toMatch(/^Refused for prod/);
  });

  it('refuses when MAAS holds more than one record for the FQDN', () => {
    const r = (id: number): DnsResource => ({ id, fqdn: FQDN, address_ttl: 10, ip_addresses: [] });
    const plan = planDnsRepair(snapshot({ resources: [r(41), r(43)] }));
    expect(plan.steps).toEqual([]);
    expect(plan.refusals[0]?.detail).toMatch(/2 DNS resources .*ids 41, 43.*will not pick one/);
  });

  it('refuses a missing record: the controller creates it', () => {
    expect(planDnsRepair(snapshot({ resources: [] })).refusals[0]?.detail).toMatch(/no DNS resource/);
  });

  it('only refreshes the hash when the record is right but the empty-set hash is cached', () => {
    const plan = planDnsRepair(snapshot({ recorded: ['10.11.135.36'] }));
    expect(plan.steps.map((s) => s.action)).toEqual(['set-dns-hash']);
  });

  it('plans nothing for a healthy cluster', () => {
    const plan = planDnsRepair(snapshot({ recorded: ['10.11.135.36'], annotation: dnsHash(['10.11.135.36']) }));
    expect(plan.steps).toEqual([]);
    expect(plan.refusals).toEqual([]);
    expect(plan.verdict).toMatch(/^Nothing to repair for prod/);
  });

  it('drift: replaces a stale IP with the running set', () => {
    const plan = planDnsRepair(snapshot({ recorded: ['10.11.135.99'], cpIps: ['10.11.135.36', '10.11.135.37'] }));
    expect(plan.steps[0]?.params).toMatchObject({ from: ['10.11.135.99'], to: ['10.11.135.36', '10.11.135.37'] });
  });
});
