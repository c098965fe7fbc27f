import { ChatopsError } from '../../core/errors.ts';
import type { ResolverObservation, SoaRecord } from './dig-types.ts';
import { sh, type SafeCommand } from './shell-quote.ts';

/** Seconds dig waits for a reply, and how many times it asks: a dead resolver costs ~2 s. */
export const DIG_TIME_SECONDS = 2;
export const DIG_TRIES = 1;
/** dig's exit status when no server replied. */
export const DIG_NO_REPLY = 9;
/** A POSIX shell's exit status for a command it cannot find. */
export const COMMAND_NOT_FOUND = 127;

/** `dig @<resolver> -p <port> <zone> SOA +time=2 +tries=1`, full output (the header holds the status). */
export function digSoaCommand(resolver: { host: string; port: number }, zone: string): SafeCommand {
  // dig reads a leading `-` or `+` as an option even inside quotes: no DNS name starts so.
  if (/^[-+]/.test(zone) || /^[-+]/.test(resolver.host)) {
    throw new ChatopsError('CONFIG_INVALID', `"${zone}" at ${resolver.host} is not a zone dig can be asked about`, {
      hint: 'rack.zone and rack.resolver must be a DNS name and an address',
    });
  }
  return sh`dig @${resolver.host} -p ${resolver.port} ${zone} SOA +time=${DIG_TIME_SECONDS} +tries=${DIG_TRIES}`;
}

/** `dig @<resolver> -p <port> <name> A +time=2 +tries=1`: what a client asking that resolver gets. */
export function digACommand(resolver: { host: string; port: number }, name: string): SafeCommand {
  if (/^[-+]/.test(name) || /^[-+]/.test(resolver.host)) {
    throw new ChatopsError('CONFIG_INVALID', `"${name}" at ${resolver.host} is not a name dig can be asked about`, { hint: 'clientView.resolver must be an address' });
  }
  return sh`dig @${resolver.host} -p ${resolver.port} ${name} A +time=${DIG_TIME_SECONDS} +tries=${DIG_TRIES}`;
}

export interface DigAnswer {
  name: string;
  ttl: number;
  class: string;
  type: string;
  data: string;
}

export interface DigResult {
  /** The header's status (NOERROR, SERVFAIL, ...); null when no reply was printed. */
  status: string | null;
  /** The header line that carries the status, as dig printed it. */
  statusLine: string | null;
  flags: string[];
  answers: DigAnswer[];
  /** The SOA of the answer section whose owner is the zone asked about; another zone's SOA is no answer. */
  soa: SoaRecord | null;
  /** The owner of an SOA in the answer section that is not the zone asked about (a resolver answering for another zone). */
  otherSoaOwner: string | null;
  /** dig exited 9: no server replied (timed out or refused). */
  noReply: boolean;
  /** The most telling error dig printed (`;; communications error to ...: timed out`). */
  errorLine: string | null;
  exitCode: number | null;
}

const HEADER_RE = /^;; ->>HEADER<<- .*\bstatus: ([A-Z0-9]+)/;

/**
 * dig's output as the check reads it. The header, flags and answers come from stdout only: what
 * else a shell on the rack writes to stderr (a login banner, a profile script) cannot pose as a
 * reply. With `zone`, the SOA is the answer whose owner is that zone.
 */
export function parseDig(stdout: string, stderr: string, exitCode: number | null, zone?: string): DigResult {
  const lines = stdout.split(/\r?\n/);
  const statusLine = lines.find((l) => HEADER_RE.test(l)) ?? null;
  const status = statusLine ? (HEADER_RE.exec(statusLine)?.[1] ?? null) : null;
  const flagsLine = lines.find((l) => l.startsWith(';; flags:'));
  const flags = flagsLine ? (/^;; flags:([^;]*)/.exec(flagsLine)?.[1] ?? '').trim().split(/\s+/).filter(Boolean) : [];
  const answers = answerSection(lines);
  const soas = answers.filter((a) => a.type === 'SOA');
  const own = zone === undefined ? undefined : soas.find((a) => sameDnsName(a.name, zone));
  const other = soas.find((a) => a !== own);
  return {
    status,
    statusLine,
    flags,
    answers,
    soa: own ? parseSoa(own.data) : null,
    otherSoaOwner: !own && other ? other.name : null,
    noReply: exitCode === DIG_NO_REPLY,
    errorLine: errorLineOf([...lines, ...stderr.split(/\r?\n/)]),
    exitCode,
  };
}

/** DNS names compare without case and without the root's trailing dot. */
export function sameDnsName(a: string, b: string): boolean {
  return a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();
}

function answerSection(lines: string[]): DigAnswer[] {
  const start = lines.findIndex((l) => l.startsWith(';; ANSWER SECTION:'));
  if (start < 0) return [];
  const answers: DigAnswer[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || line.startsWith(';')) break;
    const [name, ttl, cls, type, ...data] = line.trim().split(/\s+/);
    if (!name || !ttl || !cls || !type || !/^\d+$/.test(ttl)) continue;
    answers.push({ name, ttl: Number(ttl), class: cls, type, data: data.join(' ') });
  }
  return answers;
}

function parseSoa(data: string): SoaRecord | null {
  const [mname, rname, ...numbers] = data.split(/\s+/);
  if (!mname || !rname || numbers.length !== 5 || numbers.some((n) => !/^\d+$/.test(n))) return null;
  const [serial, refresh, retry, expire, minimum] = numbers.map(Number) as [number, number, number, number, number];
  return { mname, rname, serial, refresh, retry, expire, minimum };
}

function errorLineOf(lines: string[]): string | null {
  const specific = lines.find((l) => /^;; (communications error|connection timed out|.*: (timed out|connection refused|host unreachable|network unreachable))/i.test(l));
  if (specific) return specific.trim();
  const generic = lines.find((l) => /no servers could be reached|not found|couldn't get address|^dig: /i.test(l));
  return generic?.trim() ?? null;
}

/** What a dig run on the rack showed, for the resolver check. */
export function observeDig(result: DigResult, stderr = ''): ResolverObservation {
  if (result.statusLine && result.status) {
    const other = result.otherSoaOwner ? { otherSoaOwner: result.otherSoaOwner } : {};
    return { outcome: 'reply', status: result.status, statusLine: result.statusLine, soa: result.soa, flags: result.flags, ...other };
  }
  if (result.noReply) return { outcome: 'no-reply', detail: result.errorLine ?? ';; no servers could be reached' };
  if (result.exitCode === COMMAND_NOT_FOUND) {
    return { outcome: 'failed', reason: 'dig is not installed on the rack (exit status 127)', fix: 'Install it on the rack: sudo apt-get install bind9-dnsutils' };
  }
  const said = result.errorLine ?? firstLine(stderr);
  return { outcome: 'failed', reason: `dig exited ${result.exitCode ?? 'without a status'}${said ? `: ${said}` : ''}` };
}

function firstLine(text: string): string | null {
  return text.split(/\r?\n/).find((l) => l.trim() !== '')?.trim() ?? null;
}
