import type { RackConfig } from '../config.ts';
import { sh, type SafeCommand } from '../ssh/shell-quote.ts';
import type { SshSession } from '../ssh/types.ts';
import { subnetDnsServers, withoutSecrets, type SubnetDnsServers } from './dhcpd-conf.ts';

/**
 * Where MAAS writes the rack's dhcpd.conf: `$MAAS_DATA/dhcpd.conf`, MAAS_DATA being
 * `$SNAP_COMMON/maas` in the snap (snap/local/tree/usr/bin/run-dhcpd, run-maas-agent) and
 * /var/lib/maas otherwise (package-files/usr/lib/maas/maas-write-file, maasagent/internal/pathutil/path.go).
 */
export const MAAS_DHCPD_CONFIG_PATHS = ['/var/snap/maas/common/maas/dhcpd.conf', '/var/lib/maas/dhcpd.conf'] as const;

/** The exit status the read command uses when no candidate file exists. */
const NONE_EXISTS = 66;
const PATH_MARK = '#maas-chatops-dhcpd-path ';

/** What DHCP option 6 the rack's dhcpd.conf hands the node-facing subnet, or why it could not be read. */
export type DhcpObservation =
  | ({ outcome: 'read'; path: string } & SubnetDnsServers)
  | { outcome: 'no-subnet'; path: string; subnet: string; problem: string }
  | { outcome: 'unreadable'; reason: string; fix: string };

export function dhcpdPaths(rack: Pick<RackConfig, 'dhcpdConfig'>): string[] {
  return rack.dhcpdConfig ? [rack.dhcpdConfig] : [...MAAS_DHCPD_CONFIG_PATHS];
}

/**
 * Prints the first candidate that exists (its path on a marker line first), or exits 66. MAAS writes
 * the file 0640 as root: when the SSH user cannot read it, `sudo -n cat` (never a password prompt).
 */
export function dhcpdReadCommand(paths: readonly string[]): SafeCommand {
  return sh`for f in ${paths}; do if [ -e "$f" ]; then printf '%s%s\\n' ${PATH_MARK} "$f"; if [ -r "$f" ]; then exec cat -- "$f"; fi; exec sudo -n cat -- "$f"; fi; done; exit ${NONE_EXISTS}`;
}

/** Reads the dhcpd.conf MAAS wrote on the rack, over an open session, and finds option 6 for `cidr`. The file's secrets never leave this function. */
export async function readRackDhcp(session: SshSession, rack: Pick<RackConfig, 'dhcpdConfig'>, site: string, cidr: string, timeoutMs = 15_000): Promise<DhcpObservation> {
  const paths = dhcpdPaths(rack);
  const result = await session.exec(dhcpdReadCommand(paths), { timeoutMs });
  const where = `sites.${site}.rack.dhcpdConfig`;
  if (result.timedOut) return { outcome: 'unreadable', reason: `reading dhcpd.conf did not finish within ${Math.round(timeoutMs / 1000)}s on ${session.host}`, fix: 'Check the rack over SSH' };
  if (result.code === NONE_EXISTS) {
    return {
      outcome: 'unreadable',
      reason: `no dhcpd.conf on ${session.host} at ${paths.join(' or ')}`,
      fix: rack.dhcpdConfig
        ? `Set ${where} to where MAAS writes it on this rack ($MAAS_DATA/dhcpd.conf)`
        : `MAAS writes it only on a rack that serves DHCP for the VLAN (snap: ${MAAS_DHCPD_CONFIG_PATHS[0]}, deb: ${MAAS_DHCPD_CONFIG_PATHS[1]}); if it is elsewhere, set ${where}; if MAAS does not serve DHCP there, another DHCP server gives nodes their DNS servers`,
    };
  }
  const firstNewline = result.stdout.indexOf('\n');
  const mark = firstNewline < 0 ? result.stdout : result.stdout.slice(0, firstNewline);
  const path = mark.startsWith(PATH_MARK) ? mark.slice(PATH_MARK.length) : (paths[0] ?? '?');
  if (result.code !== 0) {
    const said = result.stderr.split('\n').find((l) => l.trim())?.trim() ?? `exit ${result.code ?? result.signal ?? '?'}`;
    const denied = /permission denied|password is required|not allowed|sudo/i.test(result.stderr);
    return {
      outcome: 'unreadable',
      reason: `cannot read ${path} on ${session.host}: ${said}`,
      fix: denied
        ? `MAAS writes it mode 0640 as root, and \`sudo -n cat -- ${path}\` was refused: give the SSH user (sites.${site}.rack.ssh.user) read access, e.g. a sudoers rule \`<user> ALL=(root) NOPASSWD: /usr/bin/cat -- ${path}\``
        : `Check ${path} on the rack`,
    };
  }
  const found = subnetDnsServers(withoutSecrets(result.stdout.slice(firstNewline + 1)), cidr);
  if (!found.found) return { outcome: 'no-subnet', path, subnet: cidr, problem: `${path} has ${found.problem}: this rack's dhcpd does not serve ${cidr}` };
  const { found: _found, ...servers } = found;
  return { outcome: 'read', path, ...servers };
}
