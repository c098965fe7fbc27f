import type { RackConfig } from '../../core/config.ts';
import { sh, type SafeCommand } from '../../adapters/ssh/shell-quote.ts';
import { SSH_OUTPUT_CAP_BYTES, type CommandResult, type SshSession } from '../../adapters/ssh/types.ts';
import { whereText, type DhcpdConf, type Problem } from './conf-model.ts';
import { parseDhcpdConf, type IncludeFile, type ParseResult } from './parse-conf.ts';
import { DEFAULT_PARSE_LIMITS } from './parse-limits.ts';
import { resolveOnRack } from './resolve-on-rack.ts';
import { subnetOption6, type NodeOption6, type SubnetOption6 } from './subnet-option6.ts';

/**
 * Where MAAS writes the rack's dhcpd.conf: `$MAAS_DATA/dhcpd.conf`, MAAS_DATA being
 * `$SNAP_COMMON/maas` in the snap (snap/local/tree/usr/bin/run-dhcpd, run-maas-agent) and
 * /var/lib/maas otherwise (package-files/usr/lib/maas/maas-write-file, maasagent/internal/pathutil/path.go).
 */
export const MAAS_DHCPD_CONFIG_PATHS = ['/var/snap/maas/common/maas/dhcpd.conf', '/var/lib/maas/dhcpd.conf'] as const;

/** The exit status the read commands use when no candidate file exists. */
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

/** Some nodes of the subnet get something else than an ordinary dynamic client. */
export interface DhcpVariant {
  who: string;
  at: string;
  /** null: these nodes get no lease on the subnet. */
  servers: string[] | null;
}

/** DHCP option 6 for the node-facing subnet as the rack's dhcpd hands it out. */
export interface DhcpServed {
  subnet: string;
  /** What an ordinary dynamic client gets, in order (with no lease for them: what a node with a fixed address gets); empty when no scope sets option 6. */
  servers: string[];
  /** The statement that set it (the last one run), one line, and where (`/var/lib/maas/dhcpd.conf:70`). */
  line?: string;
  at?: string;
  /** That statement's scope: `subnet 10.20.0.0/24`, `pool`, `shared-network vlan-5001`, `global`, `host …`; `none`. */
  scope: string;
  /** false: a dynamic client gets no lease on the subnet (no range in the declaration dhcpd uses); `servers` is then what fixed-address nodes get. */
  leases: boolean;
  /** Pools, classes, hosts, `if` branches and sibling subnets that give some nodes something else. */
  variants: DhcpVariant[];
  moreVariants: number;
  notes: string[];
  /** Include files not read and statements not modelled: option 6 may be set there (the first ones; see moreUnread). */
  unread: string[];
  /** Unread parts past those listed in `unread`: counted, not listed. */
  moreUnread?: number;
  /** Host names in the option the rack did not resolve. */
  unresolved: string[];
}

/** What DHCP option 6 the rack's dhcpd.conf hands the node-facing subnet, or why it could not be read. */
export type DhcpObservation =
  | ({ outcome: 'read'; path: string; serving: DhcpdServing } & DhcpServed)
  | {
      outcome: 'refused';
      path: string;
      subnet: string;
      serving: DhcpdServing;
      problems: string[];
      /** Refusals past those listed in `problems`: counted, not listed. */
      moreProblems?: number;
    }
  | { outcome: 'no-subnet'; path: string; subnet: string; problem: string }
  | { outcome: 'unreadable'; reason: string; fix: string };

/** Why an observation names no servers, in one line. */
export function notReadReason(read: Exclude<DhcpObservation, { outcome: 'read' }>): string {
  if (read.outcome === 'refused') return `dhcpd would refuse ${read.path}: ${read.problems[0] ?? '?'}`;
  return read.outcome === 'no-subnet' ? read.problem : read.reason;
}

/** Where the servers an ordinary node gets are set: `` `option domain-name-servers …;` at /var/lib/maas/dhcpd.conf:96, in pool ``. */
export function sourceOf(read: Extract<DhcpObservation, { outcome: 'read' }>): string {
  return read.at && read.line ? `\`${read.line}\` at ${read.at}, in ${read.scope}` : `${read.path}: no scope sets it`;
}

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

/** One `include` file, read like dhcpd.conf itself (`sudo -n cat` when the SSH user cannot read it). */
export function includeReadCommand(path: string): SafeCommand {
  return sh`f=${path}; if [ -r "$f" ]; then exec cat -- "$f"; fi; if [ -e "$f" ]; then exec sudo -n cat -- "$f"; fi; exit ${NONE_EXISTS}`;
}

const CAP_MIB = SSH_OUTPUT_CAP_BYTES / (1024 * 1024);

/**
 * Reads the dhcpd.conf MAAS wrote on the rack over an open session, follows its `include` files
 * over the same session (bounded), and finds what nodes on `cidr` get in option 6. Nothing of the
 * file but option 6 statements leaves this function (a key's secret is read past, never kept).
 */
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
  const { markers, text } = splitMarkers(result.stdout);
  const path = markers.find((l) => l.startsWith(PATH_MARK))?.slice(PATH_MARK.length) ?? paths[0] ?? '?';
  if (result.code !== 0) return unreadableFile(result, path, session.host, site);
  if (result.stdoutCut) {
    return {
      outcome: 'unreadable',
      reason: `${path} on ${session.host} is larger than the ${CAP_MIB} MiB an SSH reply may bring: the reply was cut there, so the file was not read (a cut file would be misread)`,
      fix: `MAAS's own dhcpd.conf is far smaller: look for what grew it (a DHCP snippet, an include, thousands of hosts) with \`ls -l ${path}\` on the rack`,
    };
  }
  const parsed = await readWithIncludes(session, path, text, timeoutMs);
  if (!parsed.ok) return { outcome: 'unreadable', reason: `${path} on ${session.host} was not read: ${parsed.reason}`, fix: `MAAS's own dhcpd.conf stays far inside these bounds: look at what the rack's DHCP snippets add to ${path}` };
  const serving = servingOf(markers.join('\n'), path);
  const { conf } = parsed;
  if (conf.refusals.length) return { outcome: 'refused', path, subnet: cidr, serving, problems: conf.refusals.map(problemText), moreProblems: conf.moreRefusals };
  const resolved = await resolveOnRack(session, conf.names, timeoutMs);
  const found = subnetOption6(conf, cidr, { resolved });
  if (!found.found) return { outcome: 'no-subnet', path, subnet: cidr, problem: `${path} has ${found.problem}: this rack's dhcpd does not serve ${cidr}` };
  return { outcome: 'read', path, serving, ...served(found, conf) };
}

function problemText(p: Problem): string {
  return `${whereText(p.at)}: ${p.reason}`;
}

function served(found: SubnetOption6, conf: Pick<DhcpdConf, 'unread' | 'moreUnread'>): DhcpServed {
  const nodes = found.dynamic ?? found.fixedAddress;
  const last = nodes.setBy.at(-1);
  const shown = (o: NodeOption6 | null) => (o === null ? null : o.servers);
  return {
    subnet: found.subnet,
    servers: nodes.servers,
    ...(last ? { line: last.statement, at: last.at } : {}),
    scope: last?.scope ?? 'none',
    leases: found.dynamic !== null,
    variants: found.variants.map((v) => ({ who: v.who, at: v.at, servers: shown(v.option6) })),
    moreVariants: found.moreVariants,
    notes: found.notes,
    unread: conf.unread.map(problemText),
    moreUnread: conf.moreUnread,
    unresolved: [...new Set([...nodes.unresolved, ...found.variants.flatMap((v) => v.option6?.unresolved ?? [])])],
  };
}

function unreadableFile(result: CommandResult, path: string, host: string, site: string): DhcpObservation {
  const said = result.stderr.split('\n').find((l) => l.trim())?.trim() ?? `exit ${result.code ?? result.signal ?? '?'}`;
  const denied = /permission denied|password is required|not allowed|sudo/i.test(result.stderr);
  return {
    outcome: 'unreadable',
    reason: `cannot read ${path} on ${host}: ${said}`,
    fix: denied
      ? `MAAS writes it mode 0640 as root, and \`sudo -n cat -- ${path}\` was refused: give the SSH user (sites.${site}.rack.ssh.user) read access, e.g. a sudoers rule \`<user> ALL=(root) NOPASSWD: /usr/bin/cat -- ${path}\``
      : `Check ${path} on the rack`,
  };
}

/**
 * Parses, fetches the `include` files the parse asks for over the same session, and parses again,
 * until nothing more is wanted or DEFAULT_PARSE_LIMITS.maxIncludes files were fetched; what is
 * left is reported unread, never ignored.
 */
async function readWithIncludes(session: SshSession, path: string, text: string, timeoutMs: number): Promise<ParseResult> {
  const includes = new Map<string, IncludeFile>();
  let fetched = 0;
  for (;;) {
    const parsed = parseDhcpdConf({ path, text }, includes);
    if (!parsed.ok) return parsed;
    const wanted = [...new Set(parsed.conf.wanted.map((w) => w.path))].filter((p) => !includes.has(p));
    if (!wanted.length) return parsed;
    for (const p of wanted) includes.set(p, fetched++ < DEFAULT_PARSE_LIMITS.maxIncludes ? await readInclude(session, p, timeoutMs) : { unread: `not fetched: more than ${DEFAULT_PARSE_LIMITS.maxIncludes} include files` });
  }
}

async function readInclude(session: SshSession, path: string, timeoutMs: number): Promise<IncludeFile> {
  if (!path.startsWith('/')) return { unread: 'a relative path: dhcpd opens it from its own working directory, which is not known here' };
  if (/[\0\n]/.test(path)) return { unread: 'the path holds a NUL or newline' };
  const result = await session.exec(includeReadCommand(path), { timeoutMs });
  if (result.timedOut) return { unread: `reading it did not finish within ${Math.round(timeoutMs / 1000)}s` };
  if (result.code === NONE_EXISTS) return { unread: `no such file on ${session.host} (dhcpd itself would refuse the configuration)` };
  if (result.code !== 0) return { unread: result.stderr.split('\n').find((l) => l.trim())?.trim() ?? `exit ${result.code ?? result.signal ?? '?'}` };
  if (result.stdoutCut) return { unread: `larger than the ${CAP_MIB} MiB an SSH reply may bring` };
  return { text: result.stdout };
}

const MARK = '#maas-chatops-dhcpd-';

/** The read command's marker lines, then the file as it is on the rack (its line numbers intact). */
function splitMarkers(stdout: string): { markers: string[]; text: string } {
  const markers: string[] = [];
  let at = 0;
  while (stdout.startsWith(MARK, at)) {
    const end = stdout.indexOf('\n', at);
    markers.push(stdout.slice(at, end < 0 ? stdout.length : end));
    at = end < 0 ? stdout.length : end + 1;
  }
  return { markers, text: stdout.slice(at) };
}

/** From the marker lines: the file's mtime, the rack's clock, and the dhcpd running with `-cf <path>`. */
export function servingOf(output: string, path: string): DhcpdServing {
  const lines = output.split('\n', 4096).filter((l) => l.startsWith(MARK));
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
