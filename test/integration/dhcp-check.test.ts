import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCommand } from '../../commands/index.ts';
import { findJob } from '../../jobs/index.ts';
import { isScanCheck } from '../../src/edge/alerts/scan-checks.ts';
import { main } from '../../src/cli.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';
import { NODE_SUBNET, RACK_HOST, REGION_IP, resolverSitesPerTest, type ResolverSite } from './fix-resolver-site.ts';

// Real parts: the rack is an ssh2 server running /bin/sh (dig, and cat of the dhcpd.conf the MAAS
// simulator writes as MAAS would); the rack's resolver is a real dnsmasq that SERVFAILs.

const site = resolverSitesPerTest();

async function dhcpCheck(s: ResolverSite): Promise<Report> {
  const job = findJob('dhcp-check');
  if (!job) throw new Error('dhcp-check is not registered');
  const [report] = await job.run(s.ctx, { target: 'site-b' });
  if (!report) throw new Error('no report');
  return report;
}

const codes = (r: Report) => r.findings.map((f) => [f.code, f.severity]);

describe('dhcp-check: DHCP option 6 as the rack hands it out', () => {
  it("reads option 6 from the rack's dhcpd.conf with a non-admin key, and flags the rack's failing resolver handed out first", async () => {
    const s = await site();
    s.maas.state.userIsAdmin = false;
    const report = await dhcpCheck(s);
    expect(report.kind).toBe('dhcp-check');
    expect(report.verdict).toBe(`site-b: nodes on ${NODE_SUBNET.cidr} are handed ${RACK_HOST}, ${REGION_IP} (DHCP option 6): the rack's own failing resolver comes first`);
    expect(codes(report)).toEqual([
      ['RESOLVER_DHCP_SERVERS', 'info'],
      ['RESOLVER_DHCP_RACK_FIRST', 'warning'],
    ]);
    expect(exitCodeFor([report])).toBe(1);
    // One SSH session: dig and the file read; MAAS is only read (subnets), never written.
    expect(s.ssh.sessions).toBe(1);
    expect(s.ssh.commands.filter((c) => c.includes('dhcpd'))).toHaveLength(1);
    expect(s.maas.calls.map((c) => `${c.method} ${c.path}`)).toEqual([expect.stringMatching(/^GET .*\/subnets\/$/)]);
  });

  it("warns when MAAS's subnet was changed and the rack's file still hands out the old servers (MAAS 3.7 rewrites nothing after a subnet edit)", async () => {
    const s = await site();
    const subnet = s.maas.state.subnets.find((x) => x.id === NODE_SUBNET.id);
    if (!subnet) throw new Error('no node-facing subnet');
    subnet.allow_dns = false;
    subnet.dns_servers = ['127.0.0.1'];
    const report = await dhcpCheck(s);
    expect(report.verdict).toMatch(/: the rack's own failing resolver comes first$/);
    const servers = report.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
    expect(servers?.severity).toBe('warning');
    expect(servers?.summary).toContain("MAAS's subnet now gives 127.0.0.1 (allow_dns off), so the rack's dhcpd.conf predates the subnet's last change");
  });

  it('could not check (exit 2) when the file is not there, naming the setting to fix', async () => {
    const s = await site({ dhcp: 'none' });
    const report = await dhcpCheck(s);
    expect(codes(report)).toEqual([['PROBE_FAILED', 'error']]);
    expect(report.verdict).toMatch(/^Could not read DHCP option 6 at site-b: no dhcpd\.conf on /);
    expect(report.findings[0]?.fix).toContain('sites.site-b.rack.dhcpdConfig');
    expect(exitCodeFor([report])).toBe(2);
  });

  it('is a /maas command and a terminal command like every check, and is not scanned (it has no schedules key)', async () => {
    expect(findCommand('dhcp-check')?.usage).toBe('dhcp-check <site>|all');
    expect(isScanCheck('dhcp-check')).toBe(false);

    const s = await site();
    const dir = mkdtempSync(join(tmpdir(), 'dhcp-check-'));
    try {
      const configPath = join(dir, 'maas-chatops.yaml');
      writeFileSync(configPath, s.yaml);
      const out: string[] = [];
      const code = await main(['dhcp-check', 'site-b', '--json', '--config', configPath], { out: (x) => out.push(x), err: () => undefined }, { ...s.env, PATH: process.env.PATH ?? '' });
      expect(code).toBe(1);
      expect(JSON.parse(out.join('\n'))).toMatchObject({ kind: 'dhcp-check', target: 'site-b', status: 'warning' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
