import type { DhcpObservation } from '../dhcpd-conf/index.ts';
import type { ResolverObservation } from '../../adapters/ssh/dig-types.ts';

export type { ResolverObservation, SoaRecord } from '../../adapters/ssh/dig-types.ts';

/** The check's input: which resolver was asked about which zone, how, and what it showed. */
export interface ResolverSnapshot {
  site: string;
  /** `host` or `host:port` (port shown when not 53). */
  resolver: string;
  zone: string;
  /** How the query was made, for a person: `dig on the rack (ops@10.20.0.2) over SSH`. */
  probedBy: string;
  /** The command line run on the rack, when probed over SSH. */
  command?: string;
  /** rack.forwarder, when configured: the runbook's fix names it. */
  forwarder?: string;
  observation: ResolverObservation;
  /**
   * Present when MAAS's node-facing subnet (rack.subnet) points nodes at rack.forwarder with
   * allow_dns off: then the forwarder is the resolver nodes depend on, and `observation` is only
   * the rack's own resolver (which dhcpd still hands out first).
   */
  delegation?: ForwarderDelegation;
  /** rack.subnet is configured but could not be read or found in MAAS: why. */
  subnetProblem?: string;
  /** DHCP option 6 for the node-facing subnet, read from the rack's dhcpd.conf (absent when rack.subnet's CIDR is not known). */
  dhcp?: DhcpObservation;
  /** MAAS's node-facing subnet (rack.subnet), when it was found: what option 6 MAAS renders for it. */
  nodeSubnet?: { id: number; cidr: string; dns_servers: string[]; allow_dns: boolean };
}

/** MAAS's subnet hands nodes the forwarder instead of the rack (fix-resolver's change), and what the forwarder answered. */
export interface ForwarderDelegation {
  subnet: { id: number; cidr: string; dns_servers: string[]; allow_dns: boolean };
  /** `host` or `host:port`, as resolverLabel prints it. */
  forwarder: string;
  command?: string;
  observation: ResolverObservation;
}

export function resolverLabel(host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return port === 53 ? host : `${shown}:${port}`;
}

/** The host of a `host` or `host:port` label (IPv6 in brackets), as resolverLabel prints it. */
export function hostOfLabel(label: string): string {
  const bracketed = /^\[([^\]]+)\]/.exec(label);
  if (bracketed) return bracketed[1] as string;
  const parts = label.split(':');
  return parts.length === 2 ? (parts[0] as string) : label;
}
