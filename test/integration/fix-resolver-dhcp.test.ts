import { checkJob } from '../../jobs/check-job.ts';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';
import { option6Source, RACK_HOST, REGION_IP, resolverSitesPerTest, type ResolverSite } from './fix-resolver-site.ts';

const resolverCheckJob = checkJob(resolverCheck);

// Real parts: the rack is an ssh2 server running /bin/sh (dig, and cat of a real dhcpd.conf that
// the MAAS simulator writes as MAAS 3.6 or 3.7 would); the resolvers are real dnsmasq processes.

const site = resolverSitesPerTest();

const apply = (s: ResolverSite) => fixResolverJob.run(s.ctx, { target: 'site-b', interactive: true, apply: true, requestedBy: 'terminal:ops' });
const outcomes = (r: Report | undefined) => r?.results?.map((x) => `${x.action} ${x.outcome}`);
const codes = (r: Report | undefined) => r?.findings.map((f) => [f.code, f.severity]);

describe('DHCP option 6 on the rack: read from dhcpd.conf, and rewritten by MAAS after fix-resolver', () => {
  it('resolver-check reads option 6 over the same SSH session as dig: what nodes are handed, in order', async () => {
    const s = await site();
    const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
    expect(s.ssh.sessions).toBe(1);
    expect(s.ssh.commands.filter((c) => c.includes('dhcpd'))).toHaveLength(1);
    const servers = check?.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
    expect(servers?.summary).toBe(`Nodes on 10.20.0.0/24 are handed DHCP option 6: ${RACK_HOST}, ${REGION_IP}, in that order (${option6Source(s.dhcpdPath, `${RACK_HOST}, ${REGION_IP}`)})`);
    expect(JSON.stringify(check)).not.toContain('omapi');
    expect(JSON.stringify(check)).not.toContain(readFileSync(s.dhcpdPath, 'utf8').match(/secret "([^"]+)"/)?.[1] ?? 'no secret in the file');
  });

  it('a running dhcpd older than its dhcpd.conf (MAAS 3.7 rewrites the file for a static IP without a restart): resolver-check warns that nodes may still get what it loaded', async () => {
    const s = await site({ dhcp: '3.6' });
    // A process named dhcpd running with -cf <the file>, as the snap's run-dhcpd starts it; ps on the rack sees it.
    const dir = mkdtempSync(join(tmpdir(), 'fake-dhcpd-'));
    const program = join(dir, 'dhcpd');
    writeFileSync(program, '#!/bin/sh\nsleep 30\n');
    chmodSync(program, 0o755);
    const dhcpd = spawn(program, ['-f', '-4', '-cf', s.dhcpdPath], { detached: true, stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const loaded = (await resolverCheckJob.run(s.ctx, { target: 'site-b' }))[0]?.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
      expect(loaded).toMatchObject({ severity: 'info', evidence: { serving: { loaded: true } } });

      const later = Date.now() / 1000 + 30;
      utimesSync(s.dhcpdPath, later, later);
      const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
      const servers = check?.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
      expect(servers?.severity).toBe('warning');
      expect(servers?.summary).toMatch(/; but the running dhcpd started before the file was last written, so it may still hand out what it loaded then$/);
      expect(servers?.evidence.serving).toMatchObject({ loaded: false, writtenAt: Math.floor(later) });
      expect(servers?.fix).toMatch(/restarts dhcpd only on a full reload \(maastemporalworker\/workflow\/dhcp\.py/);
    } finally {
      if (dhcpd.pid) process.kill(-dhcpd.pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MAAS 3.6: the subnet edit has the rack rewrite dhcpd.conf by itself, so fix-resolver re-saves nothing', async () => {
    const s = await site({ dhcp: '3.6' });
    const [applied] = await apply(s);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(applied?.results?.[2]?.detail).toBe(`${s.dhcpdPath} on 127.0.0.1 hands nodes on 10.20.0.0/24 option 6: 127.0.0.1 (MAAS rewrote it after the subnet edit)`);
    expect(s.writes().map((c) => c.path)).toEqual(['/MAAS/api/2.0/subnets/20/']);
  });

  it('MAAS 3.6 whose rack rewrites dhcpd.conf a moment after the subnet edit: check-dhcp reads GET version/, waits for it, and re-saves nothing', async () => {
    const s = await site({ dhcp: '3.6', dhcpTriggerDelayMs: 1_500 });
    const [applied] = await apply(s);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(applied?.results?.[2]?.detail).toBe(`${s.dhcpdPath} on 127.0.0.1 hands nodes on 10.20.0.0/24 option 6: 127.0.0.1 (MAAS 3.6.5 rewrote it after the subnet edit)`);
    expect(s.maas.calls.filter((c) => c.path === '/MAAS/api/2.0/version/')).toHaveLength(1);
    expect(s.writes().map((c) => c.path)).toEqual(['/MAAS/api/2.0/subnets/20/']);
  });

  it('MAAS 3.7 with no IP range to re-save: check-dhcp stops with the manual step, and resolver-check measures the stale option 6 with its cause', async () => {
    const s = await site({ ipranges: [] });
    const [applied] = await apply(s);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp failed', 'check-resolver skipped']);
    expect(applied?.results?.[2]?.detail).toContain(`still hands out ${RACK_HOST}, ${REGION_IP} (${option6Source(s.dhcpdPath, `${RACK_HOST}, ${REGION_IP}`)}), and subnet 10.20.0.0/24 has no IP range whose save would have MAAS rewrite it. By hand: re-save one of subnet 10.20.0.0/24's IP ranges unchanged`);
    expect(exitCodeFor([applied as Report])).toBe(2);

    const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
    expect(codes(check)).toEqual([
      ['RESOLVER_OK', 'info'],
      ['RESOLVER_DHCP_SERVERS', 'warning'],
      ['RESOLVER_DHCP_RACK_FIRST', 'warning'],
    ]);
    const rackFirst = check?.findings[2];
    expect(rackFirst?.summary).toBe(`DHCP option 6 hands nodes the rack's own resolver ${RACK_HOST} first (${RACK_HOST}, ${REGION_IP}), and it answers SERVFAIL for maas-internal: every lookup fails there before a node tries the next server`);
    expect(rackFirst?.evidence.cause).toMatch(/^with allow_dns off MAAS renders only dns_servers \(127\.0\.0\.1\), so the rack's dhcpd\.conf predates the subnet's last change: MAAS 3\.7 and later start no DHCP reconfiguration/);
  });

  it('a rack without a readable dhcpd.conf: one info line, no check-dhcp step, and the verdict stands on dig', async () => {
    const s = await site({ dhcp: 'none' });
    const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
    expect(codes(check)).toEqual([
      ['RESOLVER_SERVFAIL', 'critical'],
      ['RESOLVER_DHCP_UNREAD', 'info'],
    ]);
    expect(check?.findings[1]?.summary).toBe(`DHCP option 6 not read from the rack (no dhcpd.conf on 127.0.0.1 at ${s.dhcpdPath}): the verdict stands on dig alone`);
    expect(check?.findings[1]?.fix).toBe('Set sites.site-b.rack.dhcpdConfig to where MAAS writes it on this rack ($MAAS_DATA/dhcpd.conf)');

    const [applied] = await apply(s);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-resolver verified']);
  });
});
