/** Derived views of a scenario, computed per request so that tests may change the state freely. */
import type { MaasScenario, SimInterface } from './scenario.ts';

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

export function knownDomains(s: MaasScenario): string[] {
  return s.domains ?? unique(['maas', ...s.machines.map((m) => m.domain), ...s.rackControllers.map((r) => r.domain), ...s.dnsresources.map((r) => domainOf(r.fqdn))]);
}

export function knownZones(s: MaasScenario): string[] {
  return s.zones ?? unique(['default', ...s.machines.map((m) => m.zone), ...s.rackControllers.map((r) => r.zone)]);
}

export function knownPools(s: MaasScenario): string[] {
  return s.pools ?? unique(['default', ...s.machines.map((m) => m.pool)]);
}

export function knownTags(s: MaasScenario): string[] {
  return s.tags ?? unique(s.machines.flatMap((m) => m.tag_names));
}

/** The domain part of an fqdn as MAAS's separate_fqdn splits it for A records: after the first dot. */
export function domainOf(fqdn: string): string {
  const dot = fqdn.indexOf('.');
  return dot === -1 ? '' : fqdn.slice(dot + 1);
}

export function nameOf(fqdn: string): string {
  const dot = fqdn.indexOf('.');
  return dot === -1 ? fqdn : fqdn.slice(0, dot);
}

export interface OwnedInterface {
  hostname: string;
  iface: SimInterface;
}

export function everyInterface(s: MaasScenario): OwnedInterface[] {
  return [...s.machines, ...s.rackControllers].flatMap((node) => node.interfaces.map((iface) => ({ hostname: node.hostname, iface })));
}
