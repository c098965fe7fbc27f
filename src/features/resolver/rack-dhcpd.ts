import type { RackConfig } from '../../core/config.ts';
import { sh, type SafeCommand } from '../../adapters/ssh/shell-quote.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';
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
const TIME_MARK = '#maas-chatops-dhcpd-time ';
const PROC_MARK = '#maas-chatops-dhcpd-proc ';
/** Seconds of slack between the file's mtime and dhcpd's start (both read in whole seconds). */
const CLOCK_SLACK_S = 2;

/**
 * Whether the running dhcpd has loaded the file as it is now. MAAS 3.7 rewrites dhcpd.conf on every
 * DHCP change but restarts dhcpd only on a full reload (maastemporalworker/workflow/dhcp.py): after a
 * static-IP change the file can be newer than what dhcpd serves.
 */
export interface DhcpdServing {
  /** dhcpd started after the file was last written; absent when no dhcpd with `-cf <path>` was seen. */
  loaded?: boolean;
  writtenAt?: number;
  dhcpdSince?: number;
}

/** What DHCP option 6 the rack's dhcpd.conf hands the node-facing subnet, or why it could not be read. */
export type DhcpObservation =
  | ({ outcome: 'read'; path: string; serving: DhcpdServing } & SubnetDnsServers)
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
  return sh`for f in ${paths}; do if [ -e "$f" ]; then printf '%s%s\\n' ${PATH_MARK} "$f"; printf '%s%s %s\\n' ${TIME_MARK} "$(stat -c %Y -- "$f" 2>/dev/null)" "$(date +%s)"; ps -o etimes= -o args= -C dhcpd 2>/dev/null | sed ${`s/^/${PROC_MARK}/`}; if [ -r "$f" ]; then exec cat -- "$f"; fi; exec sudo -n cat -- "$f"; fi; done; exit ${NONE_EXISTS}`;
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
  return { outcome: 'read', path, serving: servingOf(result.stdout, path), ...servers };
}

/** From the marker lines: the file's mtime, the rack's clock, and the dhcpd running with `-cf <path>`. */
export function servingOf(output: string, path: string): DhcpdServing {
  const lines = output.split('\n');
  const [mtime, now] = (lines.find((l) => l.startsWith(TIME_MARK)) ?? '').slice(TIME_MARK.length).split(' ').map(Number);
  const procs = lines
    .filter((l) => l.startsWith(PROC_MARK))
    .map((l) => /^\s*(\d+)\s+(.*)$/.exec(l.slice(PROC_MARK.length)))
    .filter((m): m is RegExpExecArray => m !== null && (m[2] ?? '').split(/\s+/).some((arg, n, all) => arg === '-cf' && all[n + 1] === path));
  const serving: DhcpdServing = {};
  if (mtime && Number.isFinite(mtime)) serving.writtenAt = mtime;
  const elapsed = procs.length ? Math.min(...procs.map((m) => Number(m[1]))) : undefined;
  if (elapsed !== undefined && now && Number.isFinite(now)) {
    serving.dhcpdSince = now - elapsed;
    if (serving.writtenAt !== undefined) serving.loaded = serving.dhcpdSince + CLOCK_SLACK_S >= serving.writtenAt;
  }
  return serving;
}
