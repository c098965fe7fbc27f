/**
 * Network discovery as MAAS serves it (maasserver/api/discoveries.py, DiscoveriesHandler):
 * `GET discovery/` lists every discovery, most recently seen first; `op=by_unknown_mac` drops
 * the ones whose MAC any interface in MAAS has (models/discovery.py, by_unknown_mac). Each row
 * carries DISPLAYED_DISCOVERY_FIELDS; `discovery_id` is base64 of `ip,mac` (the
 * maasserver_discovery view). Read-only, and any authenticated user may read it.
 */
import { normaliseMac, type MaasScenario } from './scenario.ts';
import { ok, type SimContext, type SimResponse } from './sim-http.ts';
import type { SimDiscovery } from './scenario-records.ts';

export type { SimDiscovery } from './scenario-records.ts';

export interface DiscoveryInput {
  mac: string;
  ip?: string | null;
  /** The rack controller that saw it (its system_id and hostname come from the scenario at read time). */
  rack: { system_id: string; hostname: string; interface_id?: number };
  rackInterface: string;
  lastSeen: Date | string;
  hostname?: string | null;
  fabric?: string;
  vid?: number | null;
}

export function discovery(input: DiscoveryInput): SimDiscovery {
  const lastSeen = typeof input.lastSeen === 'string' ? input.lastSeen : input.lastSeen.toISOString();
  return {
    ip: input.ip ?? null,
    mac_address: normaliseMac(input.mac),
    mac_organization: null,
    last_seen: lastSeen,
    hostname: input.hostname ?? null,
    fabric_name: input.fabric ?? 'fabric-0',
    vid: input.vid ?? 0,
    observer: { system_id: input.rack.system_id, hostname: input.rack.hostname, interface_id: input.rack.interface_id ?? 0, interface_name: input.rackInterface },
  };
}

function render(d: SimDiscovery): Record<string, unknown> {
  return { discovery_id: Buffer.from(`${d.ip ?? ''},${d.mac_address}`).toString('base64'), ...d };
}

function knownMacs(state: MaasScenario): Set<string> {
  return new Set([...state.machines, ...state.rackControllers].flatMap((n) => n.interfaces.map((i) => normaliseMac(i.mac_address))));
}

function newestFirst(list: readonly SimDiscovery[]): SimDiscovery[] {
  return [...list].sort((a, b) => Date.parse(b.last_seen) - Date.parse(a.last_seen));
}

export function listDiscoveries(ctx: SimContext): SimResponse {
  return ok(newestFirst(ctx.state.discoveries ?? []).map(render));
}

export function unknownMacDiscoveries(ctx: SimContext): SimResponse {
  const known = knownMacs(ctx.state);
  return ok(newestFirst(ctx.state.discoveries ?? []).filter((d) => !known.has(normaliseMac(d.mac_address))).map(render));
}
