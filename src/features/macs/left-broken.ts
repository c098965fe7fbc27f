/**
 * Machines a fix-macs plan marked broken and MAAS then would not commission: still Broken, with the
 * plan's mark. From MAAS 3.5 the machine JSON's error_description carries the comment; on 3.4 only
 * the event log does (a DEBUG event), so the Broken machines without one are looked up there, in
 * one events request per IDS_PER_QUERY machines. Read-only; nothing is asked when no machine is Broken.
 */
import { describeError } from '../../core/errors.ts';
import { NODE_STATUS } from '../../adapters/maas/node-status.ts';
import type { MaasClient, MaasEvent, MaasMachine } from '../../adapters/maas/types.ts';
import { planIdInComment, planMarkInEvent, SYSTEM_MARK_BROKEN_EVENT, USER_MARK_BROKEN_EVENT } from './plan-mark.ts';

export interface LeftBroken {
  systemId: string;
  hostname: string;
  planId: string;
  /** Where the mark was read: the machine's error_description (3.5+) or the event log (3.4). */
  source: 'error_description' | 'event log';
  /** The event's time as MAAS prints it, and who sent mark_broken (event log only). */
  markedAt?: string;
  markedBy?: string;
}

export interface LeftBrokenRead {
  found: LeftBroken[];
  /** Why the event log could not be read for the Broken machines that needed it, and their hostnames. */
  unread?: { reason: string; hostnames: string[] };
}

/** Short enough for the query string; MAAS's page cap is 1000 events. */
const IDS_PER_QUERY = 50;
const EVENT_LIMIT = 1000;

export async function readLeftBroken(maas: MaasClient, machines: readonly MaasMachine[]): Promise<LeftBrokenRead> {
  const found: LeftBroken[] = [];
  const askLog: MaasMachine[] = [];
  for (const m of machines) {
    if (m.status !== NODE_STATUS.BROKEN) continue;
    if (typeof m.error_description !== 'string') {
      askLog.push(m);
      continue;
    }
    const planId = planIdInComment(m.error_description);
    if (planId) found.push({ systemId: m.system_id, hostname: m.hostname, planId, source: 'error_description' });
  }
  if (!askLog.length) return { found };
  try {
    const pages = await Promise.all(chunks(askLog, IDS_PER_QUERY).map((part) => maas.queryEvents({ ids: part.map((m) => m.system_id), limit: EVENT_LIMIT, level: 'DEBUG' })));
    const marks = newestMarkByNode(pages.flatMap((p) => p.events));
    for (const m of askLog) {
      const event = marks.get(m.system_id);
      const mark = event?.type === USER_MARK_BROKEN_EVENT ? planMarkInEvent(event.description) : undefined;
      if (event && mark) found.push({ systemId: m.system_id, hostname: m.hostname, planId: mark.planId, source: 'event log', markedAt: event.created, markedBy: mark.user });
    }
    return { found };
  } catch (err) {
    return { found, unread: { reason: describeError(err), hostnames: askLog.map((m) => m.hostname) } };
  }
}

/** The newest mark_broken event (a user's or MAAS's own) per machine: only the last one says why it is Broken now. */
function newestMarkByNode(events: readonly MaasEvent[]): Map<string, MaasEvent> {
  const out = new Map<string, MaasEvent>();
  for (const e of events) {
    if (!e.node || (e.type !== USER_MARK_BROKEN_EVENT && e.type !== SYSTEM_MARK_BROKEN_EVENT)) continue;
    const known = out.get(e.node);
    if (!known || e.id > known.id) out.set(e.node, e);
  }
  return out;
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
