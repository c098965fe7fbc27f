import type { Adapters } from '../../adapters/adapters.ts';
import { readRackDhcp, type DhcpObservation } from '../dhcpd-conf/index.ts';
import type { RackConfig, SiteConfig } from '../../core/config.ts';
import { ConfigError, describeError } from '../../core/errors.ts';
import type { Subnet } from '../../adapters/maas/types.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshConnector, SshSession } from '../../adapters/ssh/types.ts';
import { probeSoaDirect } from './soa-direct.ts';
import { digOnRack } from './site-probe.ts';
import { resolverLabel, type ResolverObservation, type ResolverSnapshot } from './types.ts';

export interface ResolverAddress {
  host: string;
  port: number;
}

/** One SOA query's outcome, and the command line when it ran on the rack. */
export interface SoaProbe {
  command?: string;
  observation: ResolverObservation;
}

export type SubnetMatch = { subnet: Subnet } | { problem: string };

/** The node-facing subnet named by rack.subnet (a MAAS id or a CIDR): exactly one, or a problem. Never a guess. */
export function findSubnet(subnets: readonly Subnet[], selector: string | number): SubnetMatch {
  const byId = typeof selector === 'number';
  const wanted = byId ? String(selector) : selector.trim().toLowerCase();
  const matches = subnets.filter((s) => (byId ? s.id === selector : s.cidr.trim().toLowerCase() === wanted));
  const what = byId ? `id ${selector}` : `CIDR ${selector}`;
  if (matches.length === 1) return { subnet: matches[0] as Subnet };
  if (matches.length === 0) {
    return { problem: `MAAS has no subnet with ${what} (it has ${subnets.length}: ${subnets.slice(0, 8).map((s) => `${s.id} ${s.cidr}`).join(', ') || 'none'})` };
  }
  return { problem: `MAAS has ${matches.length} subnets with ${what} (ids ${matches.map((s) => s.id).join(', ')}); set rack.subnet to the id of the node-facing one` };
}

/**
 * Does the subnet hand nodes the forwarder instead of MAAS's own DNS? allow_dns off, and the
 * forwarder first among dns_servers (DHCP option 6 carries addresses only, never a port).
 */
export function delegatesTo(subnet: Pick<Subnet, 'allow_dns' | 'dns_servers'>, forwarderHost: string): boolean {
  return subnet.allow_dns === false && subnet.dns_servers[0] === forwarderHost;
}

/** Did a probe see the zone answered (NOERROR with its SOA)? */
export function answersZone(observation: ResolverObservation): boolean {
  return observation.outcome === 'reply' && observation.status === 'NOERROR' && observation.soa !== null;
}

export interface SiteResolverGather {
  /** The resolver-check snapshot: the rack resolver, and `delegation` when the subnet points nodes at the forwarder. */
  snapshot: ResolverSnapshot;
  /** rack.subnet looked up in MAAS; absent when rack.subnet is not configured. */
  subnet?: SubnetMatch;
  /** The forwarder's answer, when it was asked. */
  forwarder?: SoaProbe;
}

export interface GatherOptions {
  /** `always` for fix-resolver (it must know whether the forwarder answers); resolver-check asks only a forwarder nodes use. */
  probeForwarder: 'always' | 'when-delegated';
  /** `ssh`: dig on the rack whatever rack.probe says (fix-resolver verifies from the rack); default rack.probe. */
  via?: 'ssh';
  commandTimeoutMs?: number;
}

/**
 * What nodes at a site resolve through: the rack's resolver, MAAS's node-facing subnet
 * (rack.subnet, when configured) and the forwarder (rack.forwarder). All SOA queries go through
 * one SSH session to the rack (or from the bot with probe: direct).
 */
export async function gatherSiteResolver(site: SiteConfig, adapters: Adapters, options: GatherOptions): Promise<SiteResolverGather> {
  const rack = site.rack;
  if (!rack) throw new ConfigError(`sites.${site.name}.rack: not configured`, 'Add rack (resolver, zone, probe, ssh) to check its resolver');
  const subnet = rack.subnet === undefined ? undefined : await lookupSubnet(adapters, site, rack.subnet);
  const found = subnet && 'subnet' in subnet ? subnet.subnet : undefined;
  const delegated = rack.forwarder !== undefined && found !== undefined && delegatesTo(found, rack.forwarder.host);
  const targets: ResolverAddress[] = [{ host: rack.resolverHost, port: rack.resolverPort }];
  if (rack.forwarder && (delegated || options.probeForwarder === 'always')) targets.push(rack.forwarder);

  const via = options.via ?? rack.probe;
  const dhcpCidr = found?.cidr ?? (typeof rack.subnet === 'string' ? rack.subnet : undefined);
  const probed =
    via === 'ssh'
      ? await probeOnRack(adapters.ssh, site, rack, targets, { dhcpCidr, timeoutMs: options.commandTimeoutMs })
      : { ...(await probeDirect(rack, targets)), ...(dhcpCidr ? { dhcp: await readDhcpOnly(adapters.ssh, site, rack, dhcpCidr) } : {}) };
  const [rackProbe, forwarderProbe] = probed.results as [SoaProbe, SoaProbe | undefined];

  const snapshot: ResolverSnapshot = {
    site: site.name,
    resolver: resolverLabel(rack.resolverHost, rack.resolverPort),
    zone: rack.zone,
    probedBy: probed.probedBy,
    observation: rackProbe.observation,
  };
  if (rackProbe.command) snapshot.command = rackProbe.command;
  if (rack.forwarder) snapshot.forwarder = resolverLabel(rack.forwarder.host, rack.forwarder.port);
  if (subnet && 'problem' in subnet) snapshot.subnetProblem = subnet.problem;
  if (probed.dhcp) snapshot.dhcp = probed.dhcp;
  if (found) snapshot.nodeSubnet = { id: found.id, cidr: found.cidr, dns_servers: [...found.dns_servers], allow_dns: found.allow_dns };
  if (delegated && found && forwarderProbe && snapshot.forwarder) {
    snapshot.delegation = {
      subnet: { id: found.id, cidr: found.cidr, dns_servers: [...found.dns_servers], allow_dns: found.allow_dns },
      forwarder: snapshot.forwarder,
      observation: forwarderProbe.observation,
      ...(forwarderProbe.command ? { command: forwarderProbe.command } : {}),
    };
  }
  const out: SiteResolverGather = { snapshot };
  if (subnet) out.subnet = subnet;
  if (forwarderProbe) out.forwarder = forwarderProbe;
  return out;
}

async function lookupSubnet(adapters: Adapters, site: SiteConfig, selector: string | number): Promise<SubnetMatch> {
  try {
    return findSubnet(await adapters.maas(site.maas).listSubnets(), selector);
  } catch (err) {
    return { problem: `MAAS (${site.maas}) could not list subnets: ${describeError(err)}` };
  }
}

interface RackProbe {
  probedBy: string;
  results: SoaProbe[];
  dhcp?: DhcpObservation;
}

/** Every SOA query, and the dhcpd.conf read when the subnet's CIDR is known, over one SSH session to the rack. */
async function probeOnRack(ssh: SshConnector, site: SiteConfig, rack: RackConfig, targets: ResolverAddress[], options: { dhcpCidr: string | undefined; timeoutMs: number | undefined }): Promise<RackProbe> {
  let probedBy = 'dig on the rack over SSH';
  let session: SshSession | undefined;
  try {
    const target = rackTarget(site);
    probedBy = `dig on the rack (${target.user}@${target.host}) over SSH`;
    session = await ssh.connect(target);
    const results: SoaProbe[] = [];
    for (const t of targets) results.push(await digOnRack(session, { ...rack, resolverHost: t.host, resolverPort: t.port }, options.timeoutMs));
    const dhcp = options.dhcpCidr ? await readRackDhcp(session, rack, site.name, options.dhcpCidr, options.timeoutMs) : undefined;
    return { probedBy, results, ...(dhcp ? { dhcp } : {}) };
  } catch (err) {
    const reason = describeError(err);
    const dhcp: DhcpObservation = { outcome: 'unreadable', reason: `no SSH session to the rack: ${reason}`, fix: `Check sites.${site.name}.rack.ssh` };
    return { probedBy, results: targets.map(() => ({ observation: { outcome: 'failed', reason } })), ...(options.dhcpCidr ? { dhcp } : {}) };
  } finally {
    session?.close();
  }
}

/** With probe: direct the SOA queries go from the bot; the dhcpd.conf still lives on the rack. */
async function readDhcpOnly(ssh: SshConnector, site: SiteConfig, rack: RackConfig, cidr: string): Promise<DhcpObservation> {
  if (!rack.ssh) return { outcome: 'unreadable', reason: 'rack.ssh is not configured (probe: direct), so the rack\'s dhcpd.conf cannot be read', fix: `Add sites.${site.name}.rack.ssh to see the DHCP option 6 nodes are handed` };
  let session: SshSession | undefined;
  try {
    session = await ssh.connect(rackTarget(site));
    return await readRackDhcp(session, rack, site.name, cidr);
  } catch (err) {
    return { outcome: 'unreadable', reason: `no SSH session to the rack: ${describeError(err)}`, fix: `Check sites.${site.name}.rack.ssh` };
  } finally {
    session?.close();
  }
}

async function probeDirect(rack: RackConfig, targets: ResolverAddress[]): Promise<RackProbe> {
  const results: SoaProbe[] = [];
  for (const t of targets) results.push({ observation: await probeSoaDirect(t, rack.zone) });
  return { probedBy: "the bot's own resolver (probe: direct)", results };
}
