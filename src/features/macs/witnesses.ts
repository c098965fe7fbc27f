import { normaliseMac } from '../../core/mac.ts';
import type { MaasDiscovery, MaasEvent, MaasEventPage } from '../../adapters/maas/types.ts';
import type { Finding } from '../../core/report.ts';

/*
 * MAAS's own witnesses of MAC drift, read after the verdict and never needed for it:
 * network discovery (a rack saw the live MAC as an unknown neighbour) and the machines'
 * event log (when MAAS last saw them PXE boot or commission). Two requests per site at most.
 */

/** Event types (the `type` field: the event type's description) that mean MAAS saw the machine PXE boot. */
export const PXE_EVENT_TYPES = ['Performing PXE boot', 'PXE Request'];
/** Status events of a commissioning. */
export const COMMISSIONING_EVENT_TYPES = ['Commissioning', 'Failed commissioning', 'Loading ephemeral'];

export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface DriftWitnesses {
  discovery: Read<MaasDiscovery[]>;
  events: Read<MaasEventPage>;
  /** How many rows `GET discovery/` lists, known MACs included; read only when the unknown ones are none. */
  discoveryTotal?: Read<number>;
  /** The `limit` the events request was sent with. */
  eventLimit: number;
  now: Date;
}

/** The drifted machines' system ids, in finding order, each once. */
export function driftedSystemIds(findings: readonly Finding[]): string[] {
  const ids = findings.filter((f) => f.code === 'MAC_DRIFT').map((f) => String(f.evidence.systemId));
  return [...new Set(ids)];
}

/** One events request for every drifted machine: enough for a few events each, within MAAS's cap of 1000. */
export function eventLimitFor(machines: number): number {
  return Math.min(1000, Math.max(100, 25 * machines));
}

/** The drift findings with the witnesses in their evidence and summary, then at most one info line per witness. */
export function applyWitnesses(findings: readonly Finding[], site: string, w: DriftWitnesses): Finding[] {
  const ids = driftedSystemIds(findings);
  const sightings = w.discovery.ok ? sightingsByMac(w.discovery.value) : new Map<string, MaasDiscovery>();
  const boots = w.events.ok ? lastByNode(w.events.value.events, [...PXE_EVENT_TYPES, ...COMMISSIONING_EVENT_TYPES]) : new Map<string, MaasEvent>();
  const pxes = w.events.ok ? lastByNode(w.events.value.events, PXE_EVENT_TYPES) : new Map<string, MaasEvent>();
  const pageFull = w.events.ok && w.events.value.count >= w.eventLimit && w.events.value.prev_uri !== null;
  const out = findings.map((f) => (f.code === 'MAC_DRIFT' ? witnessed(f, sightings, { boots, pxes }, w, pageFull) : f));
  const info = infoLine(site, ids, w, boots, pageFull);
  return info ? [...out, info] : out;
}

function witnessed(f: Finding, sightings: Map<string, MaasDiscovery>, events: { boots: Map<string, MaasEvent>; pxes: Map<string, MaasEvent> }, w: DriftWitnesses, pageFull: boolean): Finding {
  const evidence = { ...f.evidence };
  const notes: string[] = [];
  const live = normaliseMac(String(f.evidence.live ?? ''));
  if (w.discovery.ok) {
    const seen = live ? sightings.get(live) : undefined;
    Object.assign(evidence, sighting(seen ?? null));
    if (seen) notes.push(`rack ${seen.observer.hostname} saw ${live} on ${seen.observer.interface_name} as an unknown neighbour, last ${when(seen.last_seen, w.now)}`);
    const total = w.discoveryTotal;
    if (!seen && total?.ok && total.value > 0) {
      evidence.discoveryNeighbours = total.value;
      notes.push(`no rack saw ${live} (network discovery lists ${total.value} neighbour${total.value === 1 ? '' : 's'}, every one with a MAC MAAS knows)`);
    }
  }
  if (w.events.ok) {
    const id = String(f.evidence.systemId);
    const boot = events.boots.get(id);
    const pxe = events.pxes.get(id);
    evidence.lastPxeEvent = pxe ? pxe.created : null;
    evidence.lastBootEvent = boot ? boot.type : null;
    evidence.lastBootEventAt = boot ? boot.created : null;
    const where = pageFull ? `among the newest ${w.eventLimit} events` : "in MAAS's event log";
    if (pxe) notes.push(`no PXE event since ${when(pxe.created, w.now)}`);
    else notes.push(boot ? `no PXE event ${where}` : `no PXE or commissioning event ${where}`);
    if (boot && boot !== pxe) notes.push(`last: ${boot.type} ${when(boot.created, w.now)}`);
  }
  return notes.length ? { ...f, summary: `${f.summary}; ${notes.join('; ')}`, evidence } : { ...f, evidence };
}

function infoLine(site: string, ids: string[], w: DriftWitnesses, boots: Map<string, MaasEvent>, pageFull: boolean): Finding | null {
  const lines: string[] = [];
  const evidence: Record<string, unknown> = { site };
  if (!w.discovery.ok) {
    lines.push(`MAAS network discovery could not be read (${w.discovery.reason})`);
    evidence.discovery = w.discovery.reason;
  } else if (w.discovery.value.length === 0) {
    const total = w.discoveryTotal;
    if (total?.ok && total.value > 0) {
      // Discovery runs: the racks saw neighbours, each with a MAC some interface in MAAS has; none saw the live MACs.
    } else if (!total || !total.ok) {
      const why = total ? `its full list could not be read (${total.reason})` : 'its full list was not read';
      lines.push(`MAAS network discovery lists no unknown neighbour, and ${why} to tell whether discovery is on`);
      evidence.discovery = 'unknown';
    } else {
      lines.push('MAAS network discovery lists no neighbour at all: network discovery is probably disabled (maas <profile> maas set-config name=network_discovery value=enabled)');
      evidence.discovery = 'empty';
    }
  }
  if (!w.events.ok) {
    lines.push(`MAAS's event log could not be read (${w.events.reason})`);
    evidence.events = w.events.reason;
  } else if (w.events.value.count === 0) {
    lines.push(`MAAS's event log holds no event for the ${ids.length} drifted machine${ids.length === 1 ? '' : 's'}`);
    evidence.events = 'empty';
  } else if (pageFull && ids.some((id) => !boots.has(id))) {
    lines.push(`the newest ${w.eventLimit} events (one page; older pages not read) hold no PXE or commissioning event for ${ids.filter((id) => !boots.has(id)).length} drifted machine(s)`);
    evidence.events = 'paginated';
  }
  if (!lines.length) return null;
  return {
    code: 'MAC_WITNESS_UNAVAILABLE',
    severity: 'info',
    subject: site,
    summary: `${lines.join('; ')}. The drift verdict stands on the VM hosts' evidence.`,
    evidence,
  };
}

function sightingsByMac(entries: readonly MaasDiscovery[]): Map<string, MaasDiscovery> {
  const out = new Map<string, MaasDiscovery>();
  for (const entry of entries) {
    const mac = normaliseMac(entry.mac_address ?? '');
    if (!mac) continue;
    const known = out.get(mac);
    if (!known || Date.parse(entry.last_seen) > Date.parse(known.last_seen)) out.set(mac, entry);
  }
  return out;
}

/** Plain fields: the rack that saw the live MAC, on which interface, when, with what IP (null: no rack saw it). */
function sighting(d: MaasDiscovery | null): Record<string, unknown> {
  if (!d) return { seenByRack: null };
  return { seenByRack: d.observer.hostname, seenOnInterface: d.observer.interface_name, seenAt: d.last_seen, seenIp: d.ip, discoveryId: d.discovery_id };
}

/** The newest event of the given types per node; the page is newest first, but the ids decide. */
function lastByNode(events: readonly MaasEvent[], types: readonly string[]): Map<string, MaasEvent> {
  const out = new Map<string, MaasEvent>();
  for (const e of events) {
    if (!e.node || !types.includes(e.type)) continue;
    const known = out.get(e.node);
    if (!known || e.id > known.id) out.set(e.node, e);
  }
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An event's `created` (`Tue, 21 Jul. 2026 09:12:31`, strftime `%a, %d %b. %Y %H:%M:%S` in
 * maasserver/api/events.py) as epoch ms, read as UTC: MAAS prints the region's local time
 * without a zone, and regions run on UTC as a rule. NaN when it is not in that shape.
 */
export function eventTime(created: string): number {
  const m = /^\w{3}, (\d{1,2}) (\w{3})\.? (\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(created.trim());
  if (!m) return Number.NaN;
  const month = MONTHS.indexOf(m[2] ?? '');
  if (month < 0) return Number.NaN;
  return Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
}

/**
 * `2026-07-21 09:12:31 UTC (3d 4h ago)`, to the second as MAAS gave it (a Slack message shows it
 * with seconds, and its age as Slack's own `{ago}`), or the text as MAAS gave it when it cannot be read.
 */
function when(text: string, now: Date): string {
  const t = Number.isNaN(eventTime(text)) ? Date.parse(text) : eventTime(text);
  if (Number.isNaN(t)) return text;
  return `${new Date(t).toISOString().slice(0, 19).replace('T', ' ')} UTC (${age(t, now)} ago)`;
}

/** A coarse age: `45s`, `12m`, `3h 5m`, `2d 4h`. */
export function age(then: number, now: Date): string {
  if (Number.isNaN(then)) return 'unknown';
  const s = Math.max(0, Math.round((now.getTime() - then) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}
