/**
 * The rack's dhcpd.conf as MAAS writes it, and when MAAS rewrites it. The option 6 order follows
 * maasserver/dhcp.py (get_default_dns_servers, make_subnet_config); the text follows
 * maasserver/templates/dhcp/dhcpd.conf.template (the parts that matter here: shared-network, subnet,
 * its options, the pool and the OMAPI key stanza).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { versionAtLeast } from '../../src/adapters/maas/maas-version.ts';
import type { MaasScenario, SimSubnet } from './scenario.ts';
import type { SimDhcp, SimDhcpRack } from './scenario-records.ts';

export type { SimDhcp, SimDhcpRack, SimIpRange } from './scenario-records.ts';

function inSubnet(ip: string, cidr: string): boolean {
  const [network, prefix] = cidr.split('/');
  if (!isIPv4(ip) || !network || !isIPv4(network)) return false;
  const toInt = (a: string) => a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  const bits = Number(prefix);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (toInt(ip) & mask) === (toInt(network) & mask);
}

/** Option 6 for one subnet served by `rack`, in MAAS's order. */
export function option6For(subnet: SimSubnet, rack: SimDhcpRack, regionIp: string): string[] {
  const servers: string[] = [];
  if (subnet.allow_dns) {
    // get_default_dns_servers: the rack controllers' addresses first, the region last.
    const maasServers = [rack.ip, ...(regionIp !== rack.ip ? [regionIp] : [])];
    // make_subnet_config: with a gateway every address of the subnet's family; without one, only in-subnet addresses.
    servers.push(...maasServers.filter((ip) => (subnet.gateway_ip ? isIPv4(ip) : inSubnet(ip, subnet.cidr))));
  }
  servers.push(...subnet.dns_servers);
  return servers;
}

function netmaskOf(cidr: string): { network: string; mask: string; broadcast: string } {
  const [network = '0.0.0.0', prefix = '32'] = cidr.split('/');
  const bits = Number(prefix);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
  const net = network.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  return { network, mask: dotted(mask), broadcast: dotted((net | ~mask) >>> 0) };
}

function subnetBlock(subnet: SimSubnet, rack: SimDhcpRack, state: MaasScenario): string {
  const dhcp = state.dhcp as SimDhcp;
  const { network, mask, broadcast } = netmaskOf(subnet.cidr);
  const servers = option6For(subnet, rack, dhcp.regionIp);
  const pools = (state.ipranges ?? []).filter((r) => r.subnet === subnet.id && r.type === 'dynamic');
  return [
    `    subnet ${network} netmask ${mask} {`,
    '           ignore-client-uids true;',
    `           next-server ${rack.ip};`,
    `           option subnet-mask ${mask};`,
    `           option broadcast-address ${broadcast};`,
    ...(servers.length ? [`           option domain-name-servers ${servers.join(', ')};`] : []),
    '           option domain-name "maas";',
    ...(subnet.gateway_ip ? [`           option routers ${subnet.gateway_ip};`] : []),
    '           #',
    '           # Subnet DHCP snippets',
    '           #',
    '           # No DHCP snippets defined for subnet',
    ...pools.flatMap((p) => ['           pool {', '              # No DHCP snippets for pool', '', `              range ${p.start_ip} ${p.end_ip};`, '           }']),
    '    }',
  ].join('\n');
}

/** The whole dhcpd.conf MAAS would write for one rack now. */
export function renderDhcpdConf(state: MaasScenario, rack: SimDhcpRack): string {
  const served = state.subnets.filter((s) => rack.subnetIds.includes(s.id) && s.vlan.dhcp_on);
  const byVlan = new Map<number, SimSubnet[]>();
  for (const s of served) byVlan.set(s.vlan.id, [...(byVlan.get(s.vlan.id) ?? []), s]);
  const networks = [...byVlan.entries()].map(([vlan, subnets]) => [`shared-network vlan-${vlan} {`, ...subnets.map((s) => subnetBlock(s, rack, state)), '}'].join('\n'));
  return [
    '# WARNING: Do not edit /var/lib/maas/dhcpd.conf yourself.  MAAS will',
    '# overwrite any changes made there.  Instead, you can modify dhcpd.conf by',
    '# using DHCP snippets over the API or through the web interface.',
    '',
    'default-lease-time 600;',
    'max-lease-time 600;',
    '',
    '#',
    '# Networks',
    '#',
    ...networks,
    '',
    'omapi-port 7911;',
    'key omapi_key {',
    '    algorithm HMAC-MD5;',
    '    secret "c2ltdWxhdG9yLW9tYXBpLWtleS1ub3QtcmVhbA==";',
    '};',
    'omapi-key omapi_key;',
    '',
  ].join('\n');
}

/** MAAS's configure-dhcp for the racks serving `subnetId`: every such rack's file is rewritten (atomically, as maas-write-file does). */
export function configureDhcp(state: MaasScenario, subnetId?: number): void {
  const dhcp = state.dhcp;
  if (!dhcp) return;
  for (const rack of dhcp.racks) {
    if (subnetId !== undefined && !rack.subnetIds.includes(subnetId)) continue;
    const temp = `${rack.configPath}.tmp`;
    writeFileSync(temp, renderDhcpdConf(state, rack), { mode: 0o640 });
    renameSync(temp, rack.configPath);
    dhcp.writes = (dhcp.writes ?? 0) + 1;
  }
}

/** The 3.6 trigger's rewrite: at once, or after the modelled delay (a file gone by then is left alone). */
export function rewriteAfterTrigger(state: MaasScenario, subnetId: number): void {
  const delay = state.dhcp?.triggerDelayMs ?? 0;
  if (delay <= 0) return configureDhcp(state, subnetId);
  setTimeout(() => {
    try {
      configureDhcp(state, subnetId);
    } catch {
      // the test that owned the file has ended
    }
  }, delay).unref();
}

/** Does a subnet edit itself have the racks rewrite dhcpd.conf? Only before 3.7. */
export function subnetEditRewritesDhcp(version: string): boolean {
  return !versionAtLeast(version, 3, 7);
}

/** The subnet fields whose change the 3.6 trigger (sys_dhcp_subnet_update) answers with a rewrite. */
export function dhcpFieldsChanged(before: SimSubnet, after: SimSubnet): boolean {
  return (
    before.dns_servers.join(' ') !== after.dns_servers.join(' ') ||
    before.allow_dns !== after.allow_dns ||
    before.managed !== after.managed ||
    before.gateway_ip !== after.gateway_ip ||
    before.cidr !== after.cidr
  );
}
