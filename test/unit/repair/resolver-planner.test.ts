import { describe, expect, it } from 'vitest';
import type { RackConfig } from '../../../src/core/config.ts';
import type { SiteResolverGather } from '../../../src/features/resolver/node-facing.ts';
import type { DhcpObservation } from '../../../src/features/dhcpd-conf/index.ts';
import type { ResolverObservation } from '../../../src/features/resolver/types.ts';
import type { Subnet } from '../../../src/adapters/maas/types.ts';
import { commandDigest, configRefusal, planResolverRepair, type ResolverRepairInput } from '../../../src/features/resolver/repair-planner.ts';
import { Secret } from '../../../src/core/secret.ts';

const SOA = { mname: 'ns1.maas-internal.', rname: 'hostmaster.maas-internal.', serial: 7, refresh: 1, retry: 1, expire: 1, minimum: 1 };
const OK: ResolverObservation = { outcome: 'reply', status: 'NOERROR', statusLine: ';; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1', soa: SOA };
const SERVFAIL: ResolverObservation = { outcome: 'reply', status: 'SERVFAIL', statusLine: ';; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 2', soa: null };
const REFUSED_PORT: ResolverObservation = { outcome: 'no-reply', detail: ';; communications error to 10.20.0.53#53: connection refused' };
const SSH_DOWN: ResolverObservation = { outcome: 'failed', reason: 'connect ECONNREFUSED 10.20.0.2:22' };

const RACK: RackConfig = {
  resolverHost: '10.20.0.2',
  resolverPort: 53,
  zone: 'maas-internal',
  probe: 'ssh',
  ssh: { host: '10.20.0.2', port: 22, user: 'ops', privateKey: new Secret('k', 'test') },
  forwarder: { host: '10.20.0.53', port: 53 },
  subnet: '10.20.0.0/24',
};

function maasSubnet(over: Partial<Subnet> = {}): Subnet {
  return { id: 20, name: 'metal', cidr: '10.20.0.0/24', dns_servers: [], allow_dns: true, allow_proxy: false, managed: true, ...over };
}

function input(opts: {
  rack?: Partial<RackConfig> | null;
  rackObs?: ResolverObservation;
  forwarderObs?: ResolverObservation;
  subnets?: Subnet[] | { problem: string };
  delegated?: boolean;
  dhcp?: DhcpObservation;
}): ResolverRepairInput {
  const rack = opts.rack === null ? undefined : { ...RACK, ...opts.rack };
  const subnets = opts.subnets ?? [maasSubnet()];
  const match = Array.isArray(subnets) ? (subnets.length === 1 ? { subnet: subnets[0] as Subnet } : { problem: `MAAS has ${subnets.length} subnets with CIDR 10.20.0.0/24` }) : subnets;
  const forwarder = opts.forwarderObs ?? OK;
  const gathered: SiteResolverGather = {
    snapshot: {
      site: 'site-b',
      resolver: '10.20.0.2',
      zone: 'maas-internal',
      probedBy: 'dig on the rack (ops@10.20.0.2) over SSH',
      forwarder: '10.20.0.53',
      observation: opts.rackObs ?? SERVFAIL,
      ...(opts.dhcp ? { dhcp: opts.dhcp } : {}),
      ...('subnet' in match ? { nodeSubnet: { id: 20, cidr: '10.20.0.0/24', dns_servers: match.subnet.dns_servers, allow_dns: match.subnet.allow_dns } } : {}),
      ...(opts.delegated && 'subnet' in match
        ? { delegation: { subnet: { id: 20, cidr: '10.20.0.0/24', dns_servers: match.subnet.dns_servers, allow_dns: false }, forwarder: '10.20.0.53', observation: forwarder } }
        : {}),
    },
    subnet: match,
    forwarder: { observation: forwarder },
  };
  return { site: 'site-b', ...(rack ? { rack } : {}), gathered };
}

const actions = (i: ResolverRepairInput) => planResolverRepair(i).steps.map((s) => s.action);

describe('planResolverRepair', () => {
  it.each([
    ['SERVFAIL, forwarder answers', {}, ['verify-forwarder', 'set-subnet-dns', 'check-resolver']],
    ['SERVFAIL, forwarder down, forwarderInstall set', { forwarderObs: REFUSED_PORT, rack: { forwarderInstall: 'sudo /opt/dc/dc-rack-net.sh install' } }, ['install-forwarder', 'verify-forwarder', 'set-subnet-dns', 'check-resolver']],
    ['no reply from the rack', { rackObs: REFUSED_PORT }, ['verify-forwarder', 'set-subnet-dns', 'check-resolver']],
    ['subnet already delegated, forwarder down, install set', { delegated: true, subnets: [maasSubnet({ dns_servers: ['10.20.0.53'], allow_dns: false })], forwarderObs: SERVFAIL, rack: { forwarderInstall: 'restart' } }, ['install-forwarder', 'verify-forwarder', 'check-resolver']],
  ])('%s → %j', (_what, opts, expected) => {
    expect(actions(input(opts as Parameters<typeof input>[0]))).toEqual(expected);
  });

  it.each([
    ['no rack', { rack: null }, /has no rack: section/],
    ['no forwarder', { rack: { forwarder: undefined } }, /rack\.forwarder is not configured: set sites\.site-b\.rack\.forwarder to the address/],
    ['a forwarder name', { rack: { forwarder: { host: 'fwd.example', port: 53 } } }, /fwd\.example, not an IP address/],
    ['no subnet', { rack: { subnet: undefined } }, /rack\.subnet is not configured/],
    ['no ssh', { rack: { ssh: undefined } }, /\.ssh is not configured: fix-resolver verifies the forwarder with dig on the rack/],
    ['the rack not measured', { rackObs: SSH_DOWN }, /could not be measured \(connect ECONNREFUSED/],
    ['the subnet ambiguous', { subnets: [maasSubnet(), maasSubnet({ id: 31 })] }, /cannot be found unambiguously: MAAS has 2 subnets/],
    ['the subnet lookup failed', { subnets: { problem: 'MAAS (region-a) could not list subnets: 401' } }, /cannot be found unambiguously: MAAS \(region-a\) could not list subnets/],
    ['the forwarder down, no install', { forwarderObs: REFUSED_PORT }, /the forwarder 10\.20\.0\.53 does not reply .*never pointed at a server that does not answer/],
    ['the forwarder SERVFAILs, no install', { forwarderObs: SERVFAIL }, /the forwarder 10\.20\.0\.53 answers SERVFAIL/],
  ])('refuses: %s', (_what, opts, reason) => {
    const plan = planResolverRepair(input(opts as Parameters<typeof input>[0]));
    expect(plan.steps).toEqual([]);
    expect(plan.refusals).toHaveLength(1);
    expect(plan.refusals[0]?.detail).toMatch(reason);
    expect(plan.verdict).toMatch(/^Refused for site-b: /);
  });

  it.each([
    ['the rack resolver answers', { rackObs: OK }],
    ['the subnet points nodes at a forwarder that answers', { delegated: true, subnets: [maasSubnet({ dns_servers: ['10.20.0.53'], allow_dns: false })] }],
  ])('nothing to do when %s (no refusal, no step)', (_what, opts) => {
    const plan = planResolverRepair(input(opts));
    expect(plan.steps).toEqual([]);
    expect(plan.refusals).toEqual([]);
    expect(plan.verdict).toMatch(/^Nothing to repair at site-b: the resolver is already healthy/);
  });

  it('sends allow_proxy and managed as MAAS holds them, never a default', () => {
    for (const [allow_proxy, managed] of [
      [false, false],
      [true, true],
      [false, true],
    ] as const) {
      const plan = planResolverRepair(input({ subnets: [maasSubnet({ dns_servers: ['10.20.0.2'], allow_proxy, managed })] }));
      const put = plan.steps.find((s) => s.action === 'set-subnet-dns');
      expect(put?.params).toEqual({
        subnetId: 20,
        cidr: '10.20.0.0/24',
        from: { dns_servers: ['10.20.0.2'], allow_dns: true, allow_proxy, managed },
        to: { dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy, managed },
      });
    }
  });

  it('reports the rack first as measured in its dhcpd.conf, with the cause MAAS\'s source shows, and plans check-dhcp after the subnet change', () => {
    const dhcp: DhcpObservation = { outcome: 'read', path: '/var/snap/maas/common/maas/dhcpd.conf', subnet: '10.20.0.0/24', servers: ['10.20.0.2', '10.0.0.5'], scope: 'subnet 10.20.0.0/24', leases: true, variants: [], moreVariants: 0, notes: [], unread: [], unresolved: [], serving: {} };
    const plan = planResolverRepair(input({ dhcp }));
    expect(plan.findings.map((f) => [f.code, f.severity])).toEqual([
      ['RESOLVER_SERVFAIL', 'critical'],
      ['RESOLVER_DHCP_SERVERS', 'info'],
      ['RESOLVER_DHCP_RACK_FIRST', 'warning'],
    ]);
    expect(plan.findings[2]?.fix).toMatch(/^Cause: allow_dns is on for subnet 10\.20\.0\.0\/24, and then MAAS puts the rack first by design/);
    expect(plan.steps.map((s) => s.action)).toEqual(['verify-forwarder', 'set-subnet-dns', 'check-dhcp', 'check-resolver']);
    expect(plan.steps[2]?.params).toEqual({ site: 'site-b', subnetId: 20, cidr: '10.20.0.0/24', expect: ['10.20.0.53'] });
  });

  it('option 6 set by a pool snippet: the check-dhcp step says a subnet edit will not change it, and names the line', () => {
    const dhcp: DhcpObservation = {
      outcome: 'read', path: '/var/lib/maas/dhcpd.conf', subnet: '10.20.0.0/24', servers: ['10.20.0.2'], line: 'option domain-name-servers 10.20.0.2;', at: '/var/lib/maas/dhcpd.conf:96', scope: 'pool',
      leases: true, variants: [], moreVariants: 0, notes: [], unread: [], unresolved: [], serving: {},
    };
    const detail = planResolverRepair(input({ dhcp })).steps.find((s) => s.action === 'check-dhcp')?.detail;
    expect(detail).toContain('(now 10.20.0.2, `option domain-name-servers 10.20.0.2;` at /var/lib/maas/dhcpd.conf:96, in pool)');
    expect(detail).toContain('Nodes get it from pool, which MAAS writes from a DHCP snippet: no subnet edit changes that, so this step fails until the snippet is edited.');
  });

  it('without a readable dhcpd.conf: no rack-first guess and no check-dhcp step', () => {
    const plan = planResolverRepair(input({}));
    expect(plan.findings.map((f) => f.code)).toEqual(['RESOLVER_SERVFAIL']);
    expect(plan.steps.map((s) => s.action)).toEqual(['verify-forwarder', 'set-subnet-dns', 'check-resolver']);
  });

  it('names the install command in the detail and its digest in the params; another command is another plan', () => {
    const one = planResolverRepair(input({ forwarderObs: REFUSED_PORT, rack: { forwarderInstall: 'sudo /opt/dc/dc-rack-net.sh install' } }));
    const same = planResolverRepair(input({ forwarderObs: REFUSED_PORT, rack: { forwarderInstall: 'sudo /opt/dc/dc-rack-net.sh install' } }));
    const other = planResolverRepair(input({ forwarderObs: REFUSED_PORT, rack: { forwarderInstall: 'sudo systemctl restart dc0-node-dns' } }));
    expect(one.steps[0]?.detail).toContain('with sh -c: sudo /opt/dc/dc-rack-net.sh install');
    expect(one.steps[0]?.params).toEqual({ site: 'site-b', forwarder: '10.20.0.53', commandSha256: commandDigest('sudo /opt/dc/dc-rack-net.sh install') });
    expect(same.id).toBe(one.id);
    expect(other.id).not.toBe(one.id);
  });

  it('the plan id ignores volatile evidence (dig query ids) but follows the subnet', () => {
    const a = planResolverRepair(input({}));
    const b = planResolverRepair(input({ rackObs: { ...SERVFAIL, statusLine: ';; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 999' } }));
    const c = planResolverRepair(input({ subnets: [maasSubnet({ allow_proxy: true })] }));
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
  });
});

describe('configRefusal', () => {
  it('accepts a complete rack', () => {
    expect(configRefusal('site-b', RACK)).toBeNull();
  });
});
