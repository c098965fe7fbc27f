import { describe, expect, it } from 'vitest';
import { evaluateResolver } from '../../../src/features/resolver/evaluate.ts';
import { delegatesTo, findSubnet } from '../../../src/features/resolver/node-facing.ts';
import type { DhcpObservation } from '../../../src/features/dhcpd-conf/index.ts';
import type { ResolverObservation, ResolverSnapshot } from '../../../src/features/resolver/types.ts';
import type { Subnet } from '../../../src/adapters/maas/types.ts';

// resolver-check once fix-resolver has run: MAAS's subnet points nodes at the forwarder, so the
// forwarder is judged; what the rack's dhcpd.conf hands out is measured, never guessed.

const SOA = { mname: 'ns1.maas-internal.', rname: 'hostmaster.maas-internal.', serial: 42, refresh: 1, retry: 1, expire: 1, minimum: 1 };
const OK: ResolverObservation = { outcome: 'reply', status: 'NOERROR', statusLine: 'status: NOERROR', soa: SOA };
const SERVFAIL: ResolverObservation = { outcome: 'reply', status: 'SERVFAIL', statusLine: 'status: SERVFAIL', soa: null };
const SILENT: ResolverObservation = { outcome: 'no-reply', detail: ';; communications error to 10.20.0.53#53: timed out' };

const DHCPD = '/var/snap/maas/common/maas/dhcpd.conf';
const read = (servers: string[]): DhcpObservation => ({ outcome: 'read', path: DHCPD, subnet: '10.20.0.0/24', servers, scope: 'subnet 10.20.0.0/24', leases: true, variants: [], moreVariants: 0, notes: [], unread: [], unresolved: [], serving: {} });
const FRESH = read(['10.20.0.53']);
const STALE = read(['10.20.0.2', '10.0.0.5']);

function snapshot(rack: ResolverObservation, forwarder?: ResolverObservation, dhcp?: DhcpObservation): ResolverSnapshot {
  return {
    ...(dhcp ? { dhcp, nodeSubnet: { id: 20, cidr: '10.20.0.0/24', dns_servers: ['10.20.0.53'], allow_dns: false } } : {}),
    site: 'site-b',
    resolver: '10.20.0.2',
    zone: 'maas-internal',
    probedBy: 'dig on the rack (ops@10.20.0.2) over SSH',
    forwarder: '10.20.0.53',
    observation: rack,
    ...(forwarder ? { delegation: { subnet: { id: 20, cidr: '10.20.0.0/24', dns_servers: ['10.20.0.53'], allow_dns: false }, forwarder: '10.20.0.53', observation: forwarder } } : {}),
  };
}

describe('evaluateResolver with the subnet pointing nodes at the forwarder', () => {
  it.each([
    ['rack SERVFAIL, forwarder answers, option 6 the forwarder: healthy', SERVFAIL, OK, FRESH, [['RESOLVER_OK', 'info'], ['RESOLVER_DHCP_SERVERS', 'info']]],
    ['rack answers, forwarder answers, option 6 still the rack: stale, but the rack answers', OK, OK, STALE, [['RESOLVER_OK', 'info'], ['RESOLVER_DHCP_SERVERS', 'warning']]],
    ['rack SERVFAIL, forwarder answers, option 6 still the rack first: measured, a warning', SERVFAIL, OK, STALE, [['RESOLVER_OK', 'info'], ['RESOLVER_DHCP_SERVERS', 'warning'], ['RESOLVER_DHCP_RACK_FIRST', 'warning']]],
    ['rack SERVFAIL, forwarder SERVFAIL: critical about the forwarder', SERVFAIL, SERVFAIL, FRESH, [['RESOLVER_SERVFAIL', 'critical'], ['RESOLVER_DHCP_SERVERS', 'info']]],
    ['rack SERVFAIL, forwarder silent: critical about the forwarder', SERVFAIL, SILENT, FRESH, [['RESOLVER_NO_REPLY', 'critical'], ['RESOLVER_DHCP_SERVERS', 'info']]],
    ['dhcpd.conf unreadable: one info line, the verdict on dig alone', SERVFAIL, OK, { outcome: 'unreadable', reason: 'no dhcpd.conf', fix: 'set it' } as const, [['RESOLVER_OK', 'info'], ['RESOLVER_DHCP_UNREAD', 'info']]],
  ])('%s', (_what, rack, forwarder, dhcp, expected) => {
    const { findings } = evaluateResolver(snapshot(rack, forwarder, dhcp));
    expect(findings.map((f) => [f.code, f.severity])).toEqual(expected);
    expect(findings[0]?.evidence).toMatchObject({ resolver: '10.20.0.53', nodeFacing: 'forwarder', rackResolver: '10.20.0.2', subnet: { id: 20, allow_dns: false } });
  });

  it('says in the verdict that nodes resolve through the forwarder, and why', () => {
    expect(evaluateResolver(snapshot(SERVFAIL, OK)).verdict).toBe(
      'Nodes at site-b resolve through the forwarder 10.20.0.53 (MAAS subnet 10.20.0.0/24 (id 20): dns_servers 10.20.0.53, allow_dns off), which answers maas-internal, SOA serial 42',
    );
    const failing = evaluateResolver(snapshot(SERVFAIL, SILENT));
    expect(failing.verdict).toMatch(/^MAAS points nodes at site-b to the forwarder 10\.20\.0\.53, and it fails: No reply/);
    expect(failing.findings[0]?.fix).toMatch(/already points nodes at 10\.20\.0\.53, so the forwarder itself must answer/);
  });

  it('a stale option 6 with the rack first names the cause: MAAS renders only dns_servers with allow_dns off, and 3.7 does not rewrite dhcpd.conf on a subnet edit', () => {
    const rackFirst = evaluateResolver(snapshot(SERVFAIL, OK, STALE)).findings.find((f) => f.code === 'RESOLVER_DHCP_RACK_FIRST');
    expect(rackFirst?.evidence).toMatchObject({ option6: ['10.20.0.2', '10.0.0.5'], rackStatus: 'SERVFAIL' });
    expect(rackFirst?.evidence.cause).toContain('models/signals/subnet.py watches only vlan_id');
    expect(rackFirst?.evidence.cause).toContain('sys_dhcp_subnet_update');
  });

  it('without a delegation the rack resolver is judged as before', () => {
    const { findings } = evaluateResolver(snapshot(SERVFAIL));
    expect(findings.map((f) => f.code)).toEqual(['RESOLVER_SERVFAIL']);
    expect(findings[0]?.evidence.resolver).toBe('10.20.0.2');
  });
});

const subnets: Subnet[] = [
  { id: 3, name: 'a', cidr: '10.20.0.0/24', dns_servers: [], allow_dns: true, allow_proxy: true },
  { id: 4, name: 'b', cidr: '10.11.135.0/24', dns_servers: [], allow_dns: true, allow_proxy: true },
  { id: 5, name: 'c', cidr: '10.11.135.0/24', dns_servers: [], allow_dns: true, allow_proxy: true },
];

describe('findSubnet', () => {
  it.each([
    ['by CIDR', '10.20.0.0/24', 3],
    ['by id', 4, 4],
    ['by id where the CIDR is shared', 5, 5],
  ])('%s', (_what, selector, id) => {
    const match = findSubnet(subnets, selector);
    expect('subnet' in match && match.subnet.id).toBe(id);
  });

  it.each([
    ['an unknown CIDR', '10.99.0.0/24', /no subnet with CIDR 10\.99\.0\.0\/24 \(it has 3: 3 10\.20\.0\.0\/24/],
    ['an unknown id', 9, /no subnet with id 9/],
    ['a CIDR two subnets carry', '10.11.135.0/24', /2 subnets with CIDR 10\.11\.135\.0\/24 \(ids 4, 5\); set rack\.subnet to the id/],
  ])('never guesses: %s', (_what, selector, problem) => {
    const match = findSubnet(subnets, selector);
    expect('problem' in match && match.problem).toMatch(problem);
  });
});

describe('delegatesTo', () => {
  it.each([
    [{ allow_dns: false, dns_servers: ['10.20.0.53'] }, true],
    [{ allow_dns: false, dns_servers: ['10.20.0.53', '10.20.0.54'] }, true],
    [{ allow_dns: true, dns_servers: ['10.20.0.53'] }, false],
    [{ allow_dns: false, dns_servers: ['10.20.0.54', '10.20.0.53'] }, false],
    [{ allow_dns: false, dns_servers: [] }, false],
  ])('%j → %s', (subnet, expected) => {
    expect(delegatesTo(subnet, '10.20.0.53')).toBe(expected);
  });
});
