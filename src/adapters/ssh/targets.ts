import type { SiteConfig, SshEndpoint } from '../../core/config.ts';
import { ConfigError } from '../../core/errors.ts';
import { knownHostsPins } from './known-hosts.ts';
import type { SshTarget } from './types.ts';

/** The rack controller of a site, as `rack.ssh` configures it. */
export function rackTarget(site: SiteConfig): SshTarget {
  const where = `sites.${site.name}.rack.ssh`;
  const endpoint = site.rack?.ssh;
  if (!endpoint) {
    throw new ConfigError(`${where}: not configured`, 'Add rack.ssh (host, user, privateKey, hostKey) or set rack.probe: direct');
  }
  return buildTarget(site, endpoint, endpoint.user, where);
}

/**
 * A libvirt host named by a machine's power_address. A `vmHosts` entry for that host takes its
 * unset fields from `vmHosts.default`; the user is the entry's (or default's) `user`, else the
 * user in the power_address.
 */
export function vmHostTarget(site: SiteConfig, host: string, powerAddressUser?: string): SshTarget {
  const entry = site.vmHosts[host];
  const merged: Partial<SshEndpoint> = { ...site.vmHostDefaults, ...definedFields(entry ?? {}) };
  const endpoint = { ...merged, host: merged.host ?? host, port: merged.port ?? 22 };
  const where = `sites.${site.name}.vmHosts.${entry ? host : 'default'}`;
  const target = buildTarget(site, endpoint, merged.user ?? powerAddressUser, where);
  return { ...target, configPath: `sites.${site.name}.vmHosts.${host}` };
}

function buildTarget(site: SiteConfig, endpoint: Partial<SshEndpoint> & { host: string; port: number }, user: string | undefined, where: string): SshTarget {
  if (!user) {
    throw new ConfigError(`${where}.user: no SSH user for ${endpoint.host}`, `Set user under ${where} (or vmHosts.default)`);
  }
  if (!endpoint.privateKey) {
    throw new ConfigError(`${where}.privateKey: no SSH private key for ${endpoint.host}`, `Set privateKey: file:/path/to/key under ${where} (or vmHosts.default)`);
  }
  const pins = new Set<string>();
  if (endpoint.hostKey) pins.add(endpoint.hostKey);
  if (site.knownHosts) for (const pin of knownHostsPins(site.knownHosts.reveal(), endpoint.host, endpoint.port)) pins.add(pin);
  return { host: endpoint.host, port: endpoint.port, user, privateKey: endpoint.privateKey, hostKeys: [...pins], configPath: where };
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
