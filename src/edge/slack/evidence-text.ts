import { isMac } from '../../core/mac.ts';
import { epochMsIso, isTimeKey } from '../../core/report.ts';
import { clipText } from './mrkdwn.ts';

/**
 * Evidence as a person reads it: labels in words, IP sets as lists, MACs as `old → new`,
 * machines by name, an SOA by its serial, nested values as `label value` pairs; never JSON.
 * A field nobody taught this file still reads as words and values.
 */

const LABELS: Record<string, string> = {
  tableText: 'table',
  snippet: 'pinned-MAC snippet',
  interfaceMacs: 'live MACs by domain',
  liveInterface: 'live interface',
  systemId: 'system id',
  otherSystemId: 'other system id',
  okMachines: 'machines OK',
  fqdn: 'FQDN',
  soa: 'SOA',
  vmHost: 'VM host',
  rackResolver: 'rack resolver',
  controlPlaneEndpoint: 'control-plane endpoint',
  preferredSubnets: 'preferred subnets',
  resourceId: 'DNS resource id',
  option6: 'DHCP option 6 (DNS servers)',
  statusLine: "dig's reply header",
  ttlLeft: 'TTL left',
  state: 'client view',
  events: "MAAS's event log",
  discovery: 'MAAS network discovery',
};

/** Short codes a check keeps in the JSON report, in words (the report keeps the code). */
const VALUE_WORDS: Record<string, Record<string, string>> = {
  state: {
    'still-serving': 'still serving the old answer from cache',
    'serving-nothing': 'serving nothing: the outage has reached clients',
    matches: 'matches MAAS',
    differs: 'differs from MAAS',
    'maas-unread': "MAAS's record was not read",
  },
  events: { empty: 'holds no event for these machines', paginated: 'only its newest page was read' },
  discovery: { empty: 'lists no neighbour at all', unknown: 'could not tell whether it is on' },
};

/** Units of numbers kept bare in the JSON report. */
const UNIT: Record<string, string> = { ttlLeft: 's' };

export function humanLabel(key: string): string {
  return LABELS[key] ?? key.replace(/_/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

/** MAAS's internal handles: the JSON report keeps them, a person reading the message has no use for them. */
const MACHINE_ONLY = new Set(['discoveryId', 'interfaceId']);

/**
 * Whether a field belongs in the message: not an absent value (none, empty, virsh's `-` for
 * "no such thing") and not an internal handle. The JSON report keeps every field.
 */
export function worthShowing(key: string, value: unknown): boolean {
  if (MACHINE_ONLY.has(key)) return false;
  if (value === null || value === undefined) return false;
  return !(typeof value === 'string' && (value.trim() === '' || value.trim() === '-'));
}

/** Keys whose content another key already shows (the structured table behind its text). */
export function redundantKeys(evidence: Record<string, unknown>, summary = ''): Set<string> {
  const skip = new Set<string>();
  // A reason the finding's own sentence already quotes whole (a failed probe's) is not said twice.
  for (const key of ['reason', 'error']) {
    const value = evidence[key];
    if (typeof value === 'string' && !value.includes('\n') && summary.includes(value)) skip.add(key);
  }
  if (typeof evidence.tableText === 'string') skip.add('table');
  if (typeof evidence.snippet === 'string') skip.add('interfaceMacs');
  if (evidence.soa && evidence.serial !== undefined) skip.add('serial');
  return skip;
}

/** One value in plain words, at most `max` characters before escaping; lists say how many they left out. */
export function humanValue(key: string, value: unknown, max: number): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number' && UNIT[key]) return `${value} ${UNIT[key]}`;
  if (typeof value === 'string' && VALUE_WORDS[key]?.[value]) return VALUE_WORDS[key][value]!;
  if (key === 'statusLine' && typeof value === 'string') return clip(digHeader(value), max);
  if (typeof value !== 'object') return clip(String(value), max);
  if (Array.isArray(value)) return itemList(value.map((v) => itemText(v)), max);
  const record = value as Record<string, unknown>;
  if (key === 'soa' && record.serial !== undefined) return clip(`serial ${String(record.serial)}${record.mname ? ` (primary ${String(record.mname)})` : ''}`, max);
  return pairsText(record, max);
}

/** `recorded` and `live` MACs together read as one change. */
export function macChange(evidence: Record<string, unknown>): string | undefined {
  const { recorded, live } = evidence;
  const one = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : typeof v === 'string' ? v : undefined);
  const before = one(recorded);
  const after = one(live);
  if (before === undefined || after === undefined) return undefined;
  if (![before, after].some((m) => m.split(', ').some(isMac))) return undefined;
  return `${before || '(none)'} → ${after || '(none)'}`;
}

/** `option6` and `who` (one or a list) together read as one sentence: `handed to nodes: 127.0.1.2, 10.0.0.5`. */
export function option6Handed(evidence: Record<string, unknown>): string | undefined {
  const { option6, who } = evidence;
  const whom = Array.isArray(who) ? who.map(String).join(', ') : who;
  if (typeof whom !== 'string' || !whom || !Array.isArray(option6)) return undefined;
  return `handed to ${whom}: ${option6.length ? option6.map(String).join(', ') : '(none)'}`;
}

/** dig's `;; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 53631` as `opcode QUERY, status SERVFAIL, id 53631`. */
function digHeader(line: string): string {
  const header = /->>HEADER<<-\s*(.*)$/.exec(line)?.[1];
  return header === undefined ? line : header.replace(/(\w+): /g, '$1 ');
}

/**
 * A control-plane machine as a sentence: `prod-cp-0 (k7dx3p) is Deployed, powered on, running,
 * at 10.11.135.36`; what it lacks is said too (`powered off`, `not running`, `being deleted`).
 */
function machineText(r: Record<string, unknown>): string | undefined {
  if (typeof r.systemId !== 'string' || typeof r.state !== 'string' || typeof r.powered !== 'boolean') return undefined;
  const name = r.name ?? r.hostname ?? r.systemId;
  const parts = [`${String(name)} (${r.systemId}) is ${r.state}`];
  parts.push(r.powered ? 'powered on' : 'powered off');
  if (typeof r.running === 'boolean') parts.push(r.running ? 'running' : 'not running');
  if (r.deleting === true) parts.push('being deleted');
  if (typeof r.ip === 'string') parts.push(`at ${r.ip}`);
  else if (r.ip === null) parts.push('with no IP');
  if (Array.isArray(r.externalIps) && r.externalIps.length) parts.push(`external IPs ${r.externalIps.map(String).join(', ')}`);
  return parts.join(', ');
}

/**
 * A container image as a subject: `image v0.6.1-spectro-4.9.1 (gcr.io/…/…-controller)`;
 * the evidence shows the whole reference.
 */
export function subjectText(subject: string): string {
  const image = /^([^/\s]+)\/(?:[^\s]*\/)?([^/:\s]+):([^/:\s]+)$/.exec(subject);
  if (!image || subject.length <= 48) return subject;
  const [, registry, name, tag] = image;
  return `image ${tag} (${registry}/…/${name})`;
}

function itemText(v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string' && v.trim() === '') return '(empty)';
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return v.length ? v.map(itemText).join(' ') : '(none)';
  const r = v as Record<string, unknown>;
  const machine = machineText(r);
  if (machine) return machine;
  const name = r.name ?? r.hostname ?? r.fqdn ?? r.id;
  const rest = Object.entries(r)
    .filter(([k, x]) => x !== name && x !== undefined && k !== 'name' && k !== 'hostname')
    .map(([k, x]) => `${humanLabel(k)} ${itemText(x)}`);
  return name === undefined ? rest.join(', ') || '(none)' : `${String(name)}${rest.length ? ` (${rest.join(', ')})` : ''}`;
}

/**
 * A point in time the evidence keeps as a Unix timestamp (`writtenAt`, `dhcpdSince`: seconds, as
 * `stat -c %Y` and `date +%s` print them), written as ISO 8601 so the message shows it like every
 * other time (slack-dates.ts makes it a date token); the JSON report keeps the number.
 */
function pointInTime(key: string, value: unknown): string | undefined {
  if (typeof value !== 'number' || !isTimeKey(key)) return undefined;
  return epochMsIso(value > 1e11 ? value : value * 1000);
}

/**
 * A nested record as `label value` pairs split by `; ` (its lists inside split by `, `), so a
 * phone reads `id 20; dns servers (none); allow dns yes`; an empty field says so, never blank.
 */
function pairsText(record: Record<string, unknown>, max: number): string {
  const parts = Object.entries(record).map(([k, v]) => `${humanLabel(k)} ${pointInTime(k, v) ?? nestedValue(v)}`);
  return parts.length ? listText(parts, max, '; ') : '(none)';
}

function nestedValue(v: unknown): string {
  if (!Array.isArray(v)) return itemText(v);
  return v.length ? v.map(itemText).join(', ') : '(none)';
}

/** Items that hold commas themselves (a machine's sentence) are told apart by `; `, others by `, `. */
function itemList(items: readonly string[], max: number): string {
  return listText(items, max, items.some((i) => i.includes(', ')) ? '; ' : ', ');
}

/** `a, b, c, … +N more` within `max` characters; `none` for an empty list. */
function listText(items: readonly string[], max: number, separator = ', '): string {
  if (!items.length) return 'none';
  const shown: string[] = [];
  let used = 0;
  for (const [i, item] of items.entries()) {
    const rest = items.length - i;
    const piece = clip(item, Math.max(16, Math.floor(max / 2)));
    const tail = rest > 1 ? `${separator}… +${rest - 1} more`.length : 0;
    if (used + piece.length + separator.length + tail > max && shown.length) {
      shown.push(`… +${rest} more`);
      break;
    }
    shown.push(piece);
    used += piece.length + separator.length;
  }
  return shown.join(separator);
}

function clip(text: string, max: number): string {
  return clipText(text, max);
}
