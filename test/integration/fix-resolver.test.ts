import { checkJob } from '../../jobs/check-job.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { fixResolverRepair } from '../../src/features/resolver/repair.ts';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { main } from '../../src/cli.ts';
import { maasOAuthHeader } from '../../src/adapters/maas/oauth-header.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';
import { executePlan } from '../../src/engine/repair/executor.ts';
import { memoryJournal } from '../../src/engine/repair/journal.ts';
import { resolverStepRunner } from '../../src/features/resolver/repair-steps.ts';
import { DYNAMIC_RANGE, FORWARDER_SERIAL, NODE_SUBNET, option6Source, RACK_HOST, REGION_IP, resolverSitesPerTest, type ResolverSite } from './fix-resolver-site.ts';

const resolverCheckJob = checkJob(resolverCheck);

// Real parts: the rack is an ssh2 server running commands in /bin/sh with the installed dig; the
// rack's resolver is a dnsmasq that SERVFAILs its own zone; the forwarder is an authoritative
// dnsmasq (already running, or started as a daemon by rack.forwarderInstall over SSH); the rack's
// dhcpd.conf is a real file the simulator writes as MAAS 3.7 (default) or 3.6 would; MAAS is
// the simulator, which keeps an omitted allow_dns / allow_proxy / managed as MAAS does (APIEditMixin), or,
// told to be a stricter peer that is not MAAS, resets them to true.

const site = resolverSitesPerTest();

const run = (s: ResolverSite, apply: boolean) => fixResolverJob.run(s.ctx, { target: 'site-b', interactive: true, apply, requestedBy: 'terminal:ops' });
const nodeSubnet = (s: ResolverSite) => s.maas.state.subnets.find((x) => x.id === NODE_SUBNET.id);
const outcomes = (r: Report | undefined) => r?.results?.map((x) => `${x.action} ${x.outcome}`);

describe('fix-resolver: plan and apply against a SERVFAIL rack, a running forwarder and the MAAS simulator', () => {
  it.each([
    ['MAAS (keeps omitted flags: APIEditMixin)', {}],
    ['a stricter peer that resets omitted flags (not MAAS)', { rules: { subnetOmittedFlags: 'not-maas-reset-to-true' as const } }],
  ])('%s: the plan writes nothing; --apply PUTs dns_servers and allow_dns=false with allow_proxy and managed as they were (true/false: MAAS reads 0 as true), reads back, and resolver-check is healthy', async (_what, extra) => {
    const s = await site({ ...extra, subnet: { dns_servers: ['10.20.0.2'], allow_proxy: false, managed: false } });
    const [planned] = await run(s, false);
    expect(planned?.plan?.steps.map((x) => `${x.subject} ${x.action}`)).toEqual([
      `forwarder 127.0.0.1:${s.forwarderPort} verify-forwarder`,
      'subnet 10.20.0.0/24 set-subnet-dns',
      'subnet 10.20.0.0/24 check-dhcp',
      'site-b check-resolver',
    ]);
    expect(planned?.findings.map((f) => [f.code, f.severity])).toEqual([
      ['RESOLVER_SERVFAIL', 'critical'],
      ['RESOLVER_DHCP_SERVERS', 'info'],
      ['RESOLVER_DHCP_RACK_FIRST', 'warning'],
    ]);
    // Measured on the rack: MAAS's order with allow_dns on (the rack, the region, then dns_servers).
    expect(planned?.findings[1]?.evidence).toMatchObject({ path: s.dhcpdPath, option6: [RACK_HOST, REGION_IP, '10.20.0.2'] });
    expect(planned?.findings[2]?.fix).toMatch(/allow_dns is on for subnet 10\.20\.0\.0\/24, and then MAAS puts the rack first by design \(maasserver\/dhcp\.py/);
    expect(exitCodeFor([planned as Report])).toBe(1);
    expect(s.writes()).toEqual([]);

    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(exitCodeFor([applied as Report])).toBe(0);
    // MAAS 3.7 left dhcpd.conf as it was after the subnet edit; re-saving the range had it rewritten.
    expect(applied?.results?.[2]?.detail).toBe(
      `${s.dhcpdPath} handed out ${RACK_HOST}, ${REGION_IP}, 10.20.0.2 after the subnet edit; re-saved IP range 7 unchanged (MAAS 3.7+ rewrites dhcpd.conf on an IP range save, not on a subnet edit): now 127.0.0.1`,
    );

    expect(s.writes().map((c) => `${c.method} ${c.path} ${JSON.stringify(c.form)}`)).toEqual([
      'PUT /MAAS/api/2.0/subnets/20/ {"dns_servers":["127.0.0.1"],"allow_dns":["false"],"allow_proxy":["false"],"managed":["false"]}',
      `PUT /MAAS/api/2.0/ipranges/7/ {"comment":["${DYNAMIC_RANGE.comment}"]}`,
    ]);
    expect(readFileSync(s.dhcpdPath, 'utf8')).toContain('option domain-name-servers 127.0.0.1;');
    const put = s.maas.calls.findIndex((c) => c.method === 'PUT');
    expect(s.maas.calls.slice(put + 1).some((c) => c.method === 'GET' && c.path === '/MAAS/api/2.0/subnets/20/')).toBe(true);
    expect(nodeSubnet(s)).toMatchObject({ dns_servers: ['127.0.0.1'], allow_dns: false, allow_proxy: false, managed: false });

    const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
    expect(check?.status).toBe('ok');
    expect(check?.verdict).toBe(
      `Nodes at site-b resolve through the forwarder 127.0.0.1:${s.forwarderPort} (MAAS subnet 10.20.0.0/24 (id 20): dns_servers 127.0.0.1, allow_dns off), which answers maas-internal, SOA serial ${FORWARDER_SERIAL}`,
    );
    expect(check?.findings.map((f) => [f.code, f.severity])).toEqual([
      ['RESOLVER_OK', 'info'],
      ['RESOLVER_DHCP_SERVERS', 'info'],
    ]);
    expect(check?.findings[0]?.evidence).toMatchObject({ nodeFacing: 'forwarder', rackResolver: `${RACK_HOST}:${s.rackResolverPort}`, subnet: { id: 20, allow_dns: false } });
    expect(check?.findings[1]?.summary).toBe(`Nodes on 10.20.0.0/24 are handed DHCP option 6: 127.0.0.1, in that order (${option6Source(s.dhcpdPath, '127.0.0.1')})`);

    // Healthy now: a second fix-resolver has nothing to do and changes nothing.
    const [again] = await run(s, true);
    expect(again?.plan?.steps).toEqual([]);
    expect(again?.verdict).toMatch(/^Nothing to repair at site-b: the resolver is already healthy/);
    expect(exitCodeFor([again as Report])).toBe(0);
    expect(s.writes()).toHaveLength(2);
  });

  it('the read-back catches a PUT that forgets allow_proxy on a peer that resets it to true (not MAAS): the step fails', async () => {
    const s = await site({ subnet: { allow_proxy: false }, rules: { subnetOmittedFlags: 'not-maas-reset-to-true' } });
    const plan = await fixResolverRepair.plan(s.ctx, 'site-b');
    // A client that sends what an engineer types by hand: dns_servers and allow_dns only.
    const real = s.ctx.adapters.maas('region-a');
    const forgetful: Adapters = {
      ...s.ctx.adapters,
      maas: () => ({
        ...real,
        updateSubnetDns: async (id, update) => {
          const url = `${s.maas.url}/api/2.0/subnets/${id}/`;
          const body = new URLSearchParams({ dns_servers: update.dns_servers.join(' '), allow_dns: update.allow_dns ? '1' : '0' });
          const res = await fetch(url, { method: 'PUT', body, headers: { authorization: maasOAuthHeader(s.env.MAAS_KEY ?? '', { method: 'PUT', url }) } });
          if (!res.ok) throw new Error(`PUT ${res.status}`);
          return real.getSubnet(id);
        },
      }),
    };
    const site_ = s.config.sites['site-b'];
    if (!site_) throw new Error('no site-b');
    const results = await executePlan(plan, { runner: resolverStepRunner(site_, forgetful), journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => `${r.action} ${r.outcome}`)).toEqual(['verify-forwarder verified', 'set-subnet-dns failed', 'check-dhcp skipped', 'check-resolver skipped']);
    expect(results[1]?.detail).toMatch(/reads back .*allow_proxy on.*\(allow_proxy, managed not as sent\)/);
    expect(nodeSubnet(s)).toMatchObject({ allow_proxy: true, managed: true });
  });

  it('refuses when the forwarder does not answer and no forwarderInstall is configured: no subnet PUT, exit 2', async () => {
    const s = await site({ forwarder: 'stopped' });
    const [report] = await run(s, true);
    expect(report?.plan?.steps).toEqual([]);
    expect(report?.verdict).toMatch(new RegExp(`^Refused for site-b: the forwarder 127\\.0\\.0\\.1:${s.forwarderPort} does not reply .*MAAS is never pointed at a server that does not answer: start the forwarder on the rack \\(or set sites\\.site-b\\.rack\\.forwarderInstall`));
    expect(report?.findings.map((f) => f.code)).toEqual(['RESOLVER_SERVFAIL', 'RESOLVER_DHCP_SERVERS', 'RESOLVER_DHCP_RACK_FIRST', 'REPAIR_REFUSED']);
    expect(exitCodeFor([report as Report])).toBe(2);
    expect(s.writes()).toEqual([]);
  });

  it('runs forwarderInstall as configured (sh -c, one quoted argument) when the forwarder is down: a real dnsmasq daemon starts, then the subnet changes', async () => {
    const s = await site({ forwarder: 'stopped', install: 'daemon' });
    const [planned] = await run(s, false);
    expect(planned?.plan?.steps.map((x) => x.action)).toEqual(['install-forwarder', 'verify-forwarder', 'set-subnet-dns', 'check-dhcp', 'check-resolver']);
    expect(planned?.plan?.steps[0]?.detail).toContain(`with sh -c: ${s.daemonLine}`);
    expect(s.installs()).toEqual([]);

    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['install-forwarder verified', 'verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(s.installs()).toEqual([`sh -c '${s.daemonLine}'`]);
    expect(applied?.results?.[1]?.detail).toContain(`serial ${FORWARDER_SERIAL}`);
    expect(s.writes()).toHaveLength(2);
  });

  it('a forwarderInstall that exits 0 but starts nothing: verify fails, the plan stops, MAAS is not touched', async () => {
    const s = await site({ forwarder: 'stopped', install: 'noop' });
    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['install-forwarder verified', 'verify-forwarder failed', 'set-subnet-dns skipped', 'check-dhcp skipped', 'check-resolver skipped']);
    expect(applied?.results?.[1]?.detail).toMatch(/does not reply .*asked 3 times.*MAAS is not pointed at a server that does not answer/);
    expect(applied?.verdict).toMatch(/STOPPED at forwarder 127\.0\.0\.1:\d+ \(verify-forwarder\)/);
    expect(exitCodeFor([applied as Report])).toBe(2);
    expect(s.writes()).toEqual([]);
  });

  it('a forwarderInstall that fails: its exit status and last line are reported, nothing else runs', async () => {
    const s = await site({ forwarder: 'stopped', install: () => "echo 'dc-rack-net: no alias on br-metal' >&2; exit 3" });
    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['install-forwarder failed', 'verify-forwarder skipped', 'set-subnet-dns skipped', 'check-dhcp skipped', 'check-resolver skipped']);
    expect(applied?.results?.[0]?.detail).toBe('rack.forwarderInstall exited 3 on 127.0.0.1: dc-rack-net: no alias on br-metal');
    expect(s.writes()).toEqual([]);
  });

  it.each([
    ['no subnet with the CIDR', { subnetSelector: '10.99.0.0/24' }, /MAAS has no subnet with CIDR 10\.99\.0\.0\/24/],
    ['no subnet with the id', { subnetSelector: 77 }, /MAAS has no subnet with id 77/],
    ['two subnets with the CIDR', { extraSubnets: [{ id: 31, cidr: '10.20.0.0/24' }] }, /MAAS has 2 subnets with CIDR 10\.20\.0\.0\/24 \(ids 20, 31\)/],
    ['rack.subnet not configured', { subnetSelector: null }, /rack\.subnet is not configured: set sites\.site-b\.rack\.subnet/],
  ])('refuses when the subnet cannot be found unambiguously: %s', async (_what, options, pattern) => {
    const s = await site(options);
    const [report] = await run(s, true);
    expect(report?.plan?.steps).toEqual([]);
    expect(report?.verdict).toMatch(pattern);
    expect(exitCodeFor([report as Report])).toBe(2);
    expect(s.writes()).toEqual([]);
  });

  it('finds the subnet by its MAAS id as well', async () => {
    const s = await site({ subnetSelector: NODE_SUBNET.id, extraSubnets: [{ id: 31, cidr: '10.31.0.0/24' }] });
    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(s.writes().map((c) => c.path)).toEqual(['/MAAS/api/2.0/subnets/20/', '/MAAS/api/2.0/ipranges/7/']);
  });

  it('a healthy rack resolver: nothing to repair, exit 0, nothing written', async () => {
    const s = await site({ rackResolver: 'authoritative' });
    const [report] = await run(s, true);
    expect(report?.plan?.steps).toEqual([]);
    expect(report?.verdict).toMatch(/^Nothing to repair at site-b: the resolver is already healthy \(The resolver of site-b .* answers maas-internal/);
    expect(exitCodeFor([report as Report])).toBe(0);
    expect(s.writes()).toEqual([]);
  });

  it('through the CLI: the plan exits 1 and changes nothing; --apply exits 0 with every step verified; no secret printed', async () => {
    const s = await site();
    const dir = mkdtempSync(join(tmpdir(), 'fix-resolver-cli-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(file, s.yaml);
      const out: string[] = [];
      const io = { out: (x: string) => void out.push(x), err: () => undefined };
      const env = { ...s.env, USER: 'ops', LOG_LEVEL: 'silent' };
      expect(await main(['fix-resolver', 'site-b', '--config', file, '--json'], io, env)).toBe(1);
      expect(JSON.parse(out[0] ?? '{}')).toMatchObject({
        kind: 'fix-resolver',
        target: 'site-b',
        plan: { steps: [{ action: 'verify-forwarder' }, { action: 'set-subnet-dns' }, { action: 'check-dhcp' }, { action: 'check-resolver' }] },
      });
      expect(s.writes()).toEqual([]);
      expect(await main(['fix-resolver', 'site-b', '--config', file, '--json', '--apply'], io, env)).toBe(0);
      const applied = JSON.parse(out[1] ?? '{}') as Report;
      expect(applied.verdict).toBe('fix-resolver site-b done: 4 of 4 steps verified (applied by terminal:ops)');
      expect(s.writes()).toHaveLength(2);
      const printed = out.join('\n');
      expect(printed).not.toContain(s.env.MAAS_KEY);
      expect(printed).not.toContain('PRIVATE KEY');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
