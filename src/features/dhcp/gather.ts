import type { RackConfig, SiteConfig } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Subnet } from '../../adapters/maas/types.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';
import type { CheckContext } from '../check-spec.ts';
import type { NodeSubnet } from '../resolver/dhcp-findings.ts';
import { findSubnet } from '../resolver/node-facing.ts';
import { readRackDhcp, type DhcpObservation } from '../dhcpd-conf/index.ts';
import { digOnRack } from '../resolver/site-probe.ts';
import { resolverLabel, type ResolverSnapshot } from '../resolver/types.ts';

/** dhcp-check's snapshot: what the rack's dhcpd.conf hands the node-facing subnet in option 6, or why it could not be read. */
export type DhcpSnapshot =
  | { site: string; outcome: 'no-rack' }
  | { site: string; outcome: 'unread'; reason: string; fix: string }
  | { site: string; outcome: 'read'; rack: ResolverSnapshot & { dhcp: Extract<DhcpObservation, { outcome: 'read' | 'refused' }> }; subnet?: NodeSubnet };

/**
 * MAAS's node-facing subnet (rack.subnet, any user's key may read subnets), then over one SSH
 * session to the rack: dig for the rack's own resolver (is it the failing first server?) and the
 * dhcpd.conf MAAS wrote. Nothing is written anywhere.
 */
export async function gatherDhcp(ctx: CheckContext, site: SiteConfig): Promise<DhcpSnapshot> {
  const rack = site.rack;
  if (!rack) return { site: site.name, outcome: 'no-rack' };
  if (rack.subnet === undefined) {
    return { site: site.name, outcome: 'unread', reason: 'the node-facing subnet is not configured', fix: `Set sites.${site.name}.rack.subnet (its CIDR or MAAS id)` };
  }
  const found = await lookUpSubnet(ctx, site, rack.subnet);
  const cidr = found.subnet?.cidr ?? (typeof rack.subnet === 'string' ? rack.subnet : undefined);
  if (!cidr) return { site: site.name, outcome: 'unread', reason: found.problem ?? `subnet ${rack.subnet} not found`, fix: `Check sites.${site.name}.rack.subnet against MAAS's subnets` };
  if (!rack.ssh) return { site: site.name, outcome: 'unread', reason: "rack.ssh is not configured, so the rack's dhcpd.conf cannot be read", fix: `Add sites.${site.name}.rack.ssh` };
  const read = await readOnRack(ctx, site, rack, cidr);
  if ('unread' in read) return { site: site.name, ...read.unread };
  const subnet = found.subnet ? nodeSubnetOf(found.subnet) : undefined;
  return { site: site.name, outcome: 'read', rack: read.rack, ...(subnet ? { subnet } : {}) };
}

async function lookUpSubnet(ctx: CheckContext, site: SiteConfig, selector: string | number): Promise<{ subnet?: Subnet; problem?: string }> {
  try {
    return findSubnet(await ctx.adapters.maas(site.maas).listSubnets(), selector);
  } catch (err) {
    return { problem: `MAAS (${site.maas}) could not list subnets: ${describeError(err)}` };
  }
}

type RackRead = { rack: Extract<DhcpSnapshot, { outcome: 'read' }>['rack'] } | { unread: { outcome: 'unread'; reason: string; fix: string } };

async function readOnRack(ctx: CheckContext, site: SiteConfig, rack: RackConfig, cidr: string): Promise<RackRead> {
  let session: SshSession | undefined;
  try {
    const target = rackTarget(site);
    session = await ctx.adapters.ssh.connect(target);
    const dig = await digOnRack(session, rack);
    const dhcp = await readRackDhcp(session, rack, site.name, cidr);
    if (dhcp.outcome === 'unreadable') return { unread: { outcome: 'unread', reason: dhcp.reason, fix: dhcp.fix } };
    if (dhcp.outcome === 'no-subnet') return { unread: { outcome: 'unread', reason: dhcp.problem, fix: `Check which rack serves DHCP for ${cidr}, and set sites.${site.name}.rack to it` } };
    const probedBy = `dig on the rack (${target.user}@${target.host}) over SSH`;
    return { rack: { site: site.name, resolver: resolverLabel(rack.resolverHost, rack.resolverPort), zone: rack.zone, probedBy, command: dig.command, observation: dig.observation, dhcp } };
  } catch (err) {
    return { unread: { outcome: 'unread', reason: `no SSH session to the rack: ${describeError(err)}`, fix: `Check sites.${site.name}.rack.ssh` } };
  } finally {
    session?.close();
  }
}

function nodeSubnetOf(subnet: Subnet): NodeSubnet {
  return { id: subnet.id, cidr: subnet.cidr, dns_servers: [...subnet.dns_servers], allow_dns: subnet.allow_dns };
}
