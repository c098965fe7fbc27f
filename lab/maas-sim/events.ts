/**
 * The node event log as MAAS serves it (maasserver/api/events.py, EventsHandler.query):
 * `GET events/?op=query` filtered by node (`id`, `hostname`, `zone` repeated as MAAS's node
 * filters take them), `level` (the minimum; default INFO; AUDIT means only audit events),
 * `limit` (default 100; over 1000 is a 400; under 1 reads as 1), and `before` / `after` event
 * ids (both at once is a 400). Without either: the newest `limit`, newest first. The answer is
 * `{count, events, next_uri, prev_uri}`; prev_uri is null when nothing older can exist. Each
 * event is event_to_dict's shape, `created` formatted `%a, %d %b. %Y %H:%M:%S`.
 */
import type { MaasScenario } from './scenario.ts';
import { ok, text, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';
import type { SimEvent } from './scenario-records.ts';

export type { SimEvent } from './scenario-records.ts';

const LEVELS: Record<string, number> = { AUDIT: 0, DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 };
const MAX_EVENT_LOG_COUNT = 1000;
const DEFAULT_EVENT_LOG_LIMIT = 100;
const ALL_PARAMS = new Set(['agent_name', 'domain', 'hostname', 'id', 'level', 'limit', 'mac_address', 'op', 'zone', 'owner']);
const BASE = '/MAAS/api/2.0/events/';

/** Levels of the event types the lab uses (maascommon/events.py EVENT_DETAILS). */
const TYPE_LEVELS: Record<string, string> = {
  'PXE Request': 'DEBUG',
  'Performing PXE boot': 'INFO',
  'Loading ephemeral': 'INFO',
  Commissioning: 'INFO',
  'Failed commissioning': 'INFO',
  Ready: 'INFO',
  'User starting node commissioning': 'DEBUG',
  'Node commissioning': 'DEBUG',
  'Node powered on': 'DEBUG',
};

export interface EventInput {
  id: number;
  node: { system_id: string; hostname: string };
  type: string;
  created: Date | string;
  description?: string;
  level?: string;
  username?: string | null;
}

export function nodeEvent(input: EventInput): SimEvent {
  return {
    id: input.id,
    node: input.node.system_id,
    hostname: input.node.hostname,
    username: input.username ?? null,
    level: input.level ?? TYPE_LEVELS[input.type] ?? 'INFO',
    created: typeof input.created === 'string' ? input.created : input.created.toISOString(),
    type: input.type,
    description: input.description ?? '',
  };
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** strftime `%a, %d %b. %Y %H:%M:%S` of a UTC time (a region on UTC). */
export function maasEventTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${p(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]}. ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

function intParam(query: URLSearchParams, name: string): number | undefined | 'bad' {
  const v = query.get(name);
  if (v === null) return undefined;
  return /^-?\d+$/.test(v.trim()) ? Number(v) : 'bad';
}

/** The nodes MAAS's node filters select (system ids, hostnames, zones; none given: every node). */
function selectedNodes(state: MaasScenario, query: URLSearchParams): Set<string> {
  const ids = query.getAll('id');
  const hostnames = query.getAll('hostname');
  const zones = query.getAll('zone');
  return new Set(
    state.machines
      .filter((m) => (!ids.length || ids.includes(m.system_id)) && (!hostnames.length || hostnames.includes(m.hostname)) && (!zones.length || zones.includes(m.zone)))
      .map((m) => m.system_id),
  );
}

function uri(query: URLSearchParams, overrides: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const [k, v] of query) if (ALL_PARAMS.has(k)) params.append(k, v);
  for (const [k, v] of Object.entries(overrides)) params.set(k, v);
  return `${BASE}?${params.toString()}`;
}

export function queryEvents(ctx: SimContext, req: SimRequest): SimResponse {
  const { query } = req;
  const after = intParam(query, 'after');
  const before = intParam(query, 'before');
  let limit = intParam(query, 'limit');
  if (after === 'bad' || before === 'bad' || limit === 'bad') return text(400, 'Please enter an integer value');
  limit ??= DEFAULT_EVENT_LOG_LIMIT;
  if (limit > MAX_EVENT_LOG_COUNT) return text(400, `Requested number of events ${limit} is greater than limit: ${MAX_EVENT_LOG_COUNT}`);
  limit = Math.max(1, limit);
  const level = query.get('level') ?? 'INFO';
  if (!(level in LEVELS)) return text(400, `Unrecognised log level: ${level}`);
  const nodes = selectedNodes(ctx.state, query);
  const min = LEVELS[level] as number;
  let events = (ctx.state.events ?? []).filter((e) => nodes.has(e.node) && (level === 'AUDIT' ? e.level === 'AUDIT' : (LEVELS[e.level] ?? 20) >= min && e.level !== 'AUDIT'));
  const owner = query.get('owner');
  if (owner !== null) events = events.filter((e) => e.username === owner);
  if (after !== undefined && before !== undefined) return text(400, 'There is undetermined behaviour when both `after` and `before` are specified.');
  let page: SimEvent[];
  if (after === undefined) {
    page = events.filter((e) => before === undefined || e.id < before).sort((a, b) => b.id - a.id).slice(0, limit);
  } else {
    page = events.filter((e) => e.id > after).sort((a, b) => a.id - b.id).slice(0, limit).reverse();
  }
  const newest = page[0];
  const oldest = page[page.length - 1];
  const next_uri = newest ? uri(query, { after: String(newest.id) }) : before === undefined ? uri(query, {}) : uri(query, { after: String(before - 1) });
  const withoutAfter = new URLSearchParams([...query].filter(([k]) => k !== 'after'));
  const prev_uri = oldest ? uri(withoutAfter, { before: String(oldest.id) }) : after === undefined ? null : uri(withoutAfter, { before: String(after + 1) });
  return ok({
    count: page.length,
    events: page.map((e) => ({ username: e.username, node: e.node, hostname: e.hostname, id: e.id, level: e.level, created: maasEventTime(e.created), type: e.type, description: e.description })),
    next_uri,
    prev_uri,
  });
}
