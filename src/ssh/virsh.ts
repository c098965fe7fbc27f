import { randomBytes } from 'node:crypto';
import { normaliseMac, type Mac } from '../mac.ts';
import { sh, type SafeCommand } from './shell-quote.ts';

/** One row of `virsh domiflist`: the NIC as the running (or defined) domain has it. */
export interface LiveNic {
  /** Target device (`vnet3`), or `-` for a shut-off domain on a real hypervisor. */
  interface: string;
  type: string;
  source: string;
  model: string;
  mac: Mac;
}

export type DomainProbe =
  | { kind: 'found'; nics: LiveNic[] }
  | { kind: 'missing'; message: string }
  | { kind: 'error'; message: string; exitCode: number | null };

const MISSING_DOMAIN = 'error: failed to get domain ';

/**
 * Parses `virsh domiflist` (with or without `-q`, new or old fixed-width layout). The MAC is the
 * last whitespace-separated token of a row, as MAAS's own virsh driver reads it
 * (canonical/maas src/provisioningserver/drivers/hardware/virsh.py, get_mac_addresses); the header,
 * the dashes and blank lines are skipped, and `-` columns are kept as `-`.
 */
export function parseDomiflist(output: string): { nics: LiveNic[]; unparsed: string[] } {
  const nics: LiveNic[] = [];
  const unparsed: string[] = [];
  for (const line of output.split(/\r?\n/)) {
    const text = line.trim();
    if (text === '' || /^-+$/.test(text) || isHeader(text)) continue;
    const tokens = text.split(/\s+/);
    const mac = normaliseMac(tokens[tokens.length - 1] ?? '');
    if (!mac || tokens.length < 2) {
      unparsed.push(text);
      continue;
    }
    const columns = tokens.slice(0, -1);
    nics.push({
      interface: columns[0] ?? '-',
      type: columns[1] ?? '-',
      source: columns.length > 3 ? columns.slice(2, -1).join(' ') : (columns[2] ?? '-'),
      model: columns.length > 3 ? (columns[columns.length - 1] ?? '-') : '-',
      mac,
    });
  }
  return { nics, unparsed };
}

function isHeader(text: string): boolean {
  return /^Interface\s+Type\s+Source\s+Model\s+MAC$/i.test(text);
}

/** What one `virsh domiflist` run means, from its merged output and exit status. */
export function classifyDomiflist(output: string, exitCode: number | null): DomainProbe {
  if (exitCode === 0) {
    const { nics, unparsed } = parseDomiflist(output);
    if (unparsed.length && !nics.length) return { kind: 'error', message: firstLine(unparsed.join('\n')), exitCode };
    return { kind: 'found', nics };
  }
  const lines = output.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const missing = lines.find((l) => l.startsWith(MISSING_DOMAIN));
  if (missing) return { kind: 'missing', message: missing };
  const message = lines.find((l) => l.startsWith('error:')) ?? lines[0] ?? `virsh exited with status ${String(exitCode)}`;
  return { kind: 'error', message: exitCode === 127 ? `virsh not found on the VM host (${message})` : message, exitCode };
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

/** One domain to read, with the libvirt URI to read it from (`qemu:///system`). */
export interface DomainQuery {
  uri: string;
  domain: string;
}

export interface DomiflistBatch {
  command: SafeCommand;
  marker: string;
  queries: DomainQuery[];
}

/*
 * Every domain of one VM host in ONE remote command. The script text is constant; the marker,
 * the URIs and the domain names travel as quoted positional arguments of `sh -c`, so no name
 * reaches the shell as code, and `--` stops virsh reading a name that starts with `-` as an
 * option. Each domain's output is framed by lines holding a random per-run marker: a hostile
 * name echoed in virsh's error message cannot forge a frame it cannot guess. `sh -c` also keeps
 * the script out of a login shell that is not POSIX (tcsh on some hosts' root).
 */
const BATCH_SCRIPT =
  'm=$1; shift; i=0; ' +
  'while [ "$#" -ge 2 ]; do ' +
  'printf "\\n%s begin %s\\n" "$m" "$i"; ' +
  'LC_ALL=C virsh -q --connect "$1" domiflist -- "$2" </dev/null 2>&1; rc=$?; ' +
  'printf "\\n%s end %s %s\\n" "$m" "$i" "$rc"; ' +
  'i=$((i+1)); shift 2; done';

export function buildDomiflistBatch(queries: DomainQuery[], marker: string = randomMarker()): DomiflistBatch {
  if (!/^[A-Za-z0-9_-]{16,}$/.test(marker)) throw new Error('the batch marker must be 16 or more [A-Za-z0-9_-] characters');
  const args = queries.flatMap((q) => [q.uri, q.domain]);
  return { command: sh`sh -c ${BATCH_SCRIPT} mac-diff ${marker} ${args}`, marker, queries };
}

export function randomMarker(): string {
  return `macdiff-${randomBytes(16).toString('hex')}`;
}

/** Splits a batch's stdout back into one DomainProbe per query, in query order. */
export function splitDomiflistBatch(batch: DomiflistBatch, stdout: string): DomainProbe[] {
  const outputs = new Map<number, { lines: string[]; exitCode: number | null; ended: boolean }>();
  let current: { lines: string[]; exitCode: number | null; ended: boolean } | undefined;
  const begin = `${batch.marker} begin `;
  const end = `${batch.marker} end `;
  for (const line of stdout.split(/\r?\n/)) {
    if (line.startsWith(begin)) {
      const index = Number(line.slice(begin.length));
      current = { lines: [], exitCode: null, ended: false };
      if (Number.isInteger(index)) outputs.set(index, current);
      continue;
    }
    if (line.startsWith(end) && current) {
      const [, rc] = line.slice(end.length).split(' ');
      current.exitCode = rc !== undefined && /^\d+$/.test(rc) ? Number(rc) : null;
      current.ended = true;
      current = undefined;
      continue;
    }
    current?.lines.push(line);
  }
  return batch.queries.map((_q, index) => {
    const out = outputs.get(index);
    if (!out?.ended) return { kind: 'error', message: 'no output for this domain: the remote command was cut short', exitCode: null };
    return classifyDomiflist(out.lines.join('\n'), out.exitCode);
  });
}
