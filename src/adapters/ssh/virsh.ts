import { randomBytes } from 'node:crypto';
import { normaliseMac, type Mac } from '../../core/mac.ts';
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

/**
 * Quotes one word for virsh's own command-string parser (libvirt tools/vsh.c,
 * vshCommandStringGetArg): inside single quotes every byte is literal, `;`, `#`, blanks,
 * backslashes and newlines included; a single quote closes, `\'` outside quotes is a literal
 * quote. The same rule as a POSIX shell's, so `'it'\''s'` reads back as `it's`.
 */
export function quoteForVirsh(word: string): string {
  if (word.includes('\0')) throw new Error('a virsh argument may not contain a NUL byte');
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface DomiflistBatch {
  /** One SSH command per virsh process: one, unless the host's script outgrows one argument. */
  commands: SafeCommand[];
  marker: string;
  queries: DomainQuery[];
}

/** What one VM host's batch gave back. */
export interface BatchResult {
  /** One probe per query, in query order. */
  domains: DomainProbe[];
  /** `virsh list --all --name` on the first query's URI; null when it could not be read. */
  listed: string[] | null;
  /** virsh could not run at all (not installed, no hypervisor connection): the host's reason. */
  hostFailure: string | null;
}

/*
 * Linux caps one argv string at 128 KiB (MAX_ARG_STRLEN), and sshd hands the whole remote
 * command to the login shell as one argument: past this budget the script goes to a second
 * virsh process (about 700 domains with 60-character names fit in one).
 */
const COMMAND_BUDGET = 100_000;

/*
 * Every domain of one VM host in ONE virsh process, given its commands as one `;`-separated
 * argument (virsh parses a single non-option argument as a command string). Names are quoted
 * twice: for virsh's parser (quoteForVirsh) inside the script, then the script for sh as one
 * positional argument, so no name reaches either parser as code. Each domain's output is framed
 * by `echo` lines holding a random per-run marker: a hostile name echoed in virsh's error
 * message cannot forge a frame it cannot guess. virsh flushes stdout before every error
 * (vshError), so with 2>&1 each error lands inside its own frame. `sh -c` keeps the command
 * out of a login shell that is not POSIX (tcsh on some hosts' root).
 */
const VIRSH_SCRIPT = 'LC_ALL=C exec virsh --connect "$1" "$2" </dev/null 2>&1';

export function buildDomiflistBatch(queries: DomainQuery[], marker: string = randomMarker()): DomiflistBatch {
  if (!/^[A-Za-z0-9_-]{16,}$/.test(marker)) throw new Error('the batch marker must be 16 or more [A-Za-z0-9_-] characters');
  const firstUri = queries[0]?.uri ?? 'qemu:///system';
  const chunks: { uri: string; parts: string[]; size: number }[] = [];
  let chunk = { uri: firstUri, parts: [`echo ${marker} list-begin`, 'list --all --name', `echo ${marker} list-end`], size: 0 };
  let uri = firstUri;
  chunks.push(chunk);
  queries.forEach((q, i) => {
    const parts = [`echo ${marker} begin ${i}`, `domiflist --domain ${quoteForVirsh(q.domain)}`, `echo ${marker} end ${i}`];
    if (q.uri !== uri) parts.unshift(`connect ${quoteForVirsh(q.uri)}`);
    const size = parts.reduce((n, p) => n + p.length + 2 + 3 * (p.split("'").length - 1), 0);
    if (chunk.size + size > COMMAND_BUDGET && chunk.parts.length > 3) {
      chunk = { uri: q.uri, parts: [], size: 0 };
      chunks.push(chunk);
      if (parts[0]?.startsWith('connect ')) parts.shift();
    }
    uri = q.uri;
    chunk.parts.push(...parts);
    chunk.size += size;
  });
  const commands = chunks.map((c) => sh`sh -c ${VIRSH_SCRIPT} mac-diff ${c.uri} ${c.parts.join('; ')}`);
  return { commands, marker, queries };
}

export function randomMarker(): string {
  return `macdiff-${randomBytes(16).toString('hex')}`;
}

interface Frame {
  lines: string[];
  ended: boolean;
}

/** Splits the batch's merged output (every command's stdout, in order) back into one probe per query. */
export function splitDomiflistBatch(batch: DomiflistBatch, outputs: readonly { stdout: string; stderr?: string; code: number | null }[]): BatchResult {
  const frames = new Map<string, Frame>();
  let current: Frame | undefined;
  const prefix = `${batch.marker} `;
  const unframed: string[] = [];
  let exitCode: number | null = 0;
  for (const { stdout, stderr, code } of outputs) {
    if (code !== 0) exitCode = code;
    if (stderr) unframed.push(...stderr.split(/\r?\n/));
    for (const line of stdout.split(/\r?\n/)) {
      if (line.startsWith(prefix)) {
        const [what, index] = line.slice(prefix.length).split(' ');
        if (what === 'begin' || what === 'list-begin') {
          current = { lines: [], ended: false };
          frames.set(what === 'begin' ? `d${index ?? ''}` : 'list', current);
          continue;
        }
        if ((what === 'end' || what === 'list-end') && current) {
          current.ended = true;
          current = undefined;
          continue;
        }
      }
      if (current) current.lines.push(line);
      else unframed.push(line);
    }
  }
  if (frames.size === 0) return { domains: [], listed: null, hostFailure: hostFailureOf(unframed, exitCode) };
  const domains = batch.queries.map((_q, i): DomainProbe => {
    const frame = frames.get(`d${i}`);
    if (!frame?.ended) return { kind: 'error', message: 'no output for this domain: the remote command was cut short', exitCode: null };
    return classifyFramed(frame.lines);
  });
  const list = frames.get('list');
  const listed = list?.ended && !list.lines.some((l) => l.startsWith('error:')) ? list.lines.map((l) => l.trim()).filter(Boolean) : null;
  return { domains, listed, hostFailure: null };
}

/** In batch mode virsh reports each command's failure only as `error:` lines inside its frame. */
function classifyFramed(lines: string[]): DomainProbe {
  const failed = lines.some((l) => l.startsWith('error:'));
  return classifyDomiflist(lines.join('\n'), failed ? 1 : 0);
}

function hostFailureOf(lines: string[], exitCode: number | null): string {
  const text = lines.map((l) => l.trim()).filter(Boolean);
  const error = text.find((l) => l.startsWith('error:')) ?? text[0];
  if (exitCode === 127) return `virsh not found on the VM host (${error ?? 'exit status 127'})`;
  if (exitCode === null) return error ? `virsh was cut short: ${error}` : 'virsh was cut short before it printed anything';
  return error ?? `virsh printed nothing and exited with status ${String(exitCode)}`;
}
