import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCommand } from '../../commands/index.ts';
import { findJob } from '../../jobs/index.ts';
import { isScanCheck } from '../../src/edge/alerts/scan-checks.ts';
import { main } from '../../src/cli.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';
import { SSH_OUTPUT_CAP_BYTES } from '../../src/adapters/ssh/types.ts';
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

/** Where MAAS's template puts each kind of DHCP snippet in the file the simulator wrote (maasserver/templates/dhcp/dhcpd.conf.template). */
const SNIPPET_MARK = { subnet: '# No DHCP snippets defined for subnet', pool: '# No DHCP snippets for pool' } as const;

/** Adds a DHCP snippet to the rack's dhcpd.conf as MAAS renders one (a host snippet goes in a host block at the end). */
function addSnippet(s: ResolverSite, where: keyof typeof SNIPPET_MARK | 'end', text: string): string {
  const before = readFileSync(s.dhcpdPath, 'utf8');
  const after = where === 'end' ? `${before}\n${text}\n` : before.replace(SNIPPET_MARK[where], text);
  if (after === before) throw new Error(`no ${where} snippet place in ${s.dhcpdPath}`);
  writeFileSync(s.dhcpdPath, after);
  return s.dhcpdPath;
}

const lineOf = (path: string, text: string) => `${path}:${readFileSync(path, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1}`;

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

  it('a MAAS pool snippet that sets option 6 is what ordinary nodes get, with its line; the subnet\'s own line is not the answer', async () => {
    const s = await site();
    const subnet = s.maas.state.subnets.find((x) => x.id === NODE_SUBNET.id);
    if (!subnet) throw new Error('no node-facing subnet');
    Object.assign(subnet, { allow_dns: false, dns_servers: ['10.20.0.53'] });
    const path = addSnippet(s, 'pool', 'option domain-name-servers 10.99.0.53;');
    writeFileSync(path, readFileSync(path, 'utf8').replace(`option domain-name-servers ${RACK_HOST}, ${REGION_IP};`, 'option domain-name-servers 10.20.0.53;'));
    const report = await dhcpCheck(s);
    expect(report.verdict).toBe(`site-b: nodes on ${NODE_SUBNET.cidr} are handed 10.99.0.53 (DHCP option 6, set in pool), which may not be what MAAS's subnet says now`);
    const servers = report.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
    expect(servers?.evidence).toMatchObject({ option6: ['10.99.0.53'], scope: 'pool', at: lineOf(path, '10.99.0.53') });
    expect(servers?.summary).toContain("; MAAS's subnet now gives 10.20.0.53 (allow_dns off), so pool overrides what MAAS renders for the subnet (a DHCP snippet)");
    expect(servers?.fix).toContain('which MAAS writes from a DHCP snippet and no subnet edit changes');
    expect(codes(report)).toEqual([['RESOLVER_DHCP_SERVERS', 'warning']]);
  });

  it("a host snippet handing one node the rack's failing resolver first: that node is named, with the host's line", async () => {
    const s = await site();
    const path = addSnippet(s, 'end', `host node-x {\n   option domain-name-servers ${RACK_HOST}, 10.20.0.53;\n   hardware ethernet 52:54:00:aa:00:01;\n   fixed-address 10.20.0.11;\n}`);
    writeFileSync(path, readFileSync(path, 'utf8').replace(`option domain-name-servers ${RACK_HOST}, ${REGION_IP};`, 'option domain-name-servers 10.20.0.53;'));
    const report = await dhcpCheck(s);
    expect(report.verdict).toBe(`site-b: nodes on ${NODE_SUBNET.cidr} are handed 10.20.0.53 (DHCP option 6); 1 narrower scope gives some nodes something else: the rack's own failing resolver comes first`);
    const rackFirst = report.findings.find((f) => f.code === 'RESOLVER_DHCP_RACK_FIRST');
    expect(rackFirst?.summary).toMatch(/^DHCP option 6 hands the node with MAC 52:54:00:aa:00:01 \(host node-x, fixed address\) the rack's own resolver /);
    expect(report.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS')?.evidence.variants).toEqual([
      { who: 'the node with MAC 52:54:00:aa:00:01 (host node-x, fixed address)', at: lineOf(path, 'host node-x'), servers: [RACK_HOST, '10.20.0.53'] },
    ]);
  });

  it('an escaped quote cannot plant a fake option 6 (issue 27): the rack stays first, as dhcpd hands it out', async () => {
    const s = await site();
    addSnippet(s, 'subnet', 'option domain-name "x\\"; option domain-name-servers 10.20.0.53; \\"";');
    const report = await dhcpCheck(s);
    expect(report.verdict).toMatch(new RegExp(`handed ${RACK_HOST.replace(/\./g, '\\.')}, ${REGION_IP.replace(/\./g, '\\.')} \\(DHCP option 6\\): the rack's own failing resolver comes first$`));
  });

  it('an include line is followed over the same SSH session; one that cannot be read is reported, and the answer is a warning', async () => {
    const s = await site();
    const extra = `${s.dhcpdPath}.extra`;
    writeFileSync(extra, 'option domain-name-servers 10.77.0.53;\n');
    addSnippet(s, 'subnet', `include "${extra}";\ninclude "${s.dhcpdPath}.missing";`);
    const report = await dhcpCheck(s);
    const servers = report.findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
    expect(servers?.evidence).toMatchObject({ option6: ['10.77.0.53'], at: `${extra}:1` });
    expect(servers?.severity).toBe('warning');
    expect(report.verdict).toBe(`site-b: nodes on ${NODE_SUBNET.cidr} are handed 10.77.0.53 (DHCP option 6); 1 part of the file could not be read and may set option 6 too`);
    expect(servers?.summary).toContain(`not read, and may set option 6 too: ${lineOf(s.dhcpdPath, '.missing')}: \`include "${s.dhcpdPath}.missing"\` could not be read (no such file on 127.0.0.1`);
    expect(s.ssh.sessions).toBe(1);
    expect(s.ssh.commands.filter((c) => c.includes('.extra') || c.includes('.missing'))).toHaveLength(2);
  });

  it('a file dhcpd would refuse is reported as refused, not read for servers', async () => {
    const s = await site();
    addSnippet(s, 'end', 'subnet6 2001:db8::/64 { range6 2001:db8::100 2001:db8::1ff; }');
    const report = await dhcpCheck(s);
    expect(report.verdict).toBe(`site-b: dhcpd would refuse ${s.dhcpdPath}, so nodes on ${NODE_SUBNET.cidr} get no answer from this rack once dhcpd restarts`);
    expect(codes(report)).toEqual([['RESOLVER_DHCP_REFUSED', 'warning']]);
    expect(report.findings[0]?.evidence.problems).toEqual([expect.stringMatching(/subnet6 statement is only supported in DHCPv6 mode/)]);
  });

  it('a file larger than an SSH reply may bring is reported as cut, not misread as having no subnet block (issue 27)', async () => {
    const s = await site();
    writeFileSync(s.dhcpdPath, `${'#'.repeat(SSH_OUTPUT_CAP_BYTES)}\n${readFileSync(s.dhcpdPath, 'utf8')}`);
    const report = await dhcpCheck(s);
    expect(codes(report)).toEqual([['PROBE_FAILED', 'error']]);
    expect(report.verdict).toBe(`Could not read DHCP option 6 at site-b: ${s.dhcpdPath} on 127.0.0.1 is larger than the 4 MiB an SSH reply may bring: the reply was cut there, so the file was not read (a cut file would be misread)`);
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
