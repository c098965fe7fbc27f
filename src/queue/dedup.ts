import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CHECKS } from '../features/registry.ts';
import type { ReplyTarget } from '../notifier.ts';

/**
 * Deduplication of checks under load: the first request for a (check, target) opens a group and
 * queues one job; every identical request within the window joins the group instead, and its
 * reply target is added to the group's waiters. The worker closes the group when the check ends
 * and posts the one result to every waiting channel. Repairs are never grouped: a plan is per
 * request and per approval.
 *
 * Keys (all under the BullMQ prefix):
 *   <prefix>:dedup:open:<job>:<target>  HASH id, at (opened, ms), by (user), started (ms); expires with the window
 *   <prefix>:dedup:waiters:<id>         LIST of reply targets (JSON); lives until the job posts
 *   <prefix>:dedup:req:<request id>     STRING: the group a request went to (10 min), so that a request
 *                                       resent or retried across a lost connection joins one group once
 * Joining and closing are single Lua scripts, so a requester either joins before the close (and
 * is posted to) or after it (and opens a new group): none is lost between the two.
 */

/** The job kinds that are checks (read-only, same answer for the same target): safe to share. */
export const DEDUPLICATED_JOBS: ReadonlySet<string> = new Set(CHECKS.filter((c) => c.dedup === 'same-target').map((c) => c.name));

/** How long after the first request an identical one still joins it. */
export const DEFAULT_DEDUP_WINDOW_MS = 60_000;

/** Waiters of a group whose job never ends (lost Redis data, a job removed by hand) expire after this. */
const WAITERS_TTL_MS = 24 * 3600 * 1000;

/** A request's marker outlives any resend or retry of it (seconds) and a late take-back (a minute). */
const REQUEST_TTL_MS = 10 * 60 * 1000;

/** The job data field that names a job's group. */
export const DEDUP_GROUP_FIELD = 'dedupGroup';

/** The check a request joined instead of queuing its own. */
export interface JoinedCheck {
  /** The job id of the check. */
  id: string;
  /** When the first request opened it (ms since the epoch). */
  openedAt: number;
  /** Who asked first. */
  openedBy?: string;
  /** When a worker started it; absent while it is still queued. */
  startedAt?: number;
}

/** What queuing a job did: its id, and for a check that was already queued or running, which one. */
export interface Submitted {
  id: string;
  joined?: JoinedCheck;
}

export interface CheckDedupOptions {
  windowMs?: number;
}

export type JoinResult = { opened: true } | { opened: false; joined: JoinedCheck };

// KEYS[1] open key, KEYS[2] this request's marker. ARGV: new id, reply json, now, requester, window ms,
// waiters ttl ms, waiters key prefix, marker ttl ms. The marker names the group the request went to:
// the same request run again (resent after a lost connection, or retried) lands there again, never twice.
const JOIN_OR_OPEN = `
local seen = redis.call('GET', KEYS[2])
if seen then
  if seen == ARGV[1] then return false end
  if redis.call('HGET', KEYS[1], 'id') == seen then return redis.call('HGETALL', KEYS[1]) end
  return {'id', seen, 'at', '0'}
end
local id = redis.call('HGET', KEYS[1], 'id')
if id then
  redis.call('RPUSH', ARGV[7] .. id, ARGV[2])
  redis.call('SET', KEYS[2], id, 'PX', ARGV[8])
  return redis.call('HGETALL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'at', ARGV[3], 'by', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('RPUSH', ARGV[7] .. ARGV[1], ARGV[2])
redis.call('PEXPIRE', ARGV[7] .. ARGV[1], ARGV[6])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[8])
return false
`;

// KEYS[1] open key, KEYS[2] waiters. ARGV[1] id. Closes the group (if still open) and returns its waiters.
const CLOSE_AND_COLLECT = `
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return redis.call('LRANGE', KEYS[2], 0, -1)
`;

// KEYS[1] open key. ARGV[1] id, ARGV[2] now.
const MARK_STARTED = `
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then redis.call('HSET', KEYS[1], 'started', ARGV[2]) end
return 1
`;

export class CheckDedup {
  readonly windowMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: CheckDedupOptions = {},
  ) {
    this.windowMs = options.windowMs ?? DEFAULT_DEDUP_WINDOW_MS;
  }

  /** Joins the open group of (job, target), or opens one under `newId`; either way `reply` will be posted to. */
  async joinOrOpen(jobName: string, target: string, newId: string, reply: ReplyTarget | undefined, requestedBy: string | undefined): Promise<JoinResult> {
    const answer = (await runScript(this.redis, JOIN_OR_OPEN, [this.openKey(jobName, target), this.requestKey(newId)], [
      newId,
      JSON.stringify(reply ?? null),
      String(Date.now()),
      requestedBy ?? '',
      String(this.windowMs),
      String(WAITERS_TTL_MS),
      this.waitersPrefix(),
      String(REQUEST_TTL_MS),
    ])) as string[] | null;
    if (!answer) return { opened: true };
    return { opened: false, joined: joinedFrom(answer) };
  }

  /** The job of a group could not be queued: close the group so that nobody else joins it. */
  async abandon(jobName: string, target: string, id: string): Promise<void> {
    await runScript(this.redis, CLOSE_AND_COLLECT, [this.openKey(jobName, target), this.waitersKey(id)], [id]);
    await this.redis.del(this.waitersKey(id));
  }

  async markStarted(jobName: string, target: string, id: string): Promise<void> {
    await runScript(this.redis, MARK_STARTED, [this.openKey(jobName, target)], [id, String(Date.now())]);
  }

  /** Closes the group to new requesters and returns every reply target that joined it (in order). */
  async closeAndCollect(jobName: string, target: string, id: string): Promise<ReplyTarget[]> {
    const raw = (await runScript(this.redis, CLOSE_AND_COLLECT, [this.openKey(jobName, target), this.waitersKey(id)], [id])) as string[];
    return raw.map((s) => JSON.parse(s) as ReplyTarget | null).filter((t): t is ReplyTarget => t !== null && typeof t.channel === 'string');
  }

  /** After the result was posted: a retry of the same job (a crash before completion) would post again otherwise. */
  async forget(id: string): Promise<void> {
    await this.redis.del(this.waitersKey(id));
  }

  openKey(jobName: string, target: string): string {
    return `${this.prefix}:dedup:open:${jobName}:${target}`;
  }

  async forgetRequest(requestId: string): Promise<void> {
    await this.redis.del(this.requestKey(requestId));
  }

  /** Which group one request went to, so that running it again cannot put it in two. */
  requestKey(requestId: string): string {
    return `${this.prefix}:dedup:req:${requestId}`;
  }

  waitersKey(id: string): string {
    return `${this.waitersPrefix()}${id}`;
  }

  private waitersPrefix(): string {
    return `${this.prefix}:dedup:waiters:`;
  }
}

/**
 * One post per channel (and thread): ten people asking for the same check in #ops get one
 * result there, not ten copies of it; every one of them was named in their own ack. Requesters
 * in other channels get it in theirs.
 */
export function postTargets(waiters: ReplyTarget[]): ReplyTarget[] {
  const byPlace = new Map<string, ReplyTarget>();
  for (const w of waiters) {
    const place = `${w.channel}\u0000${w.threadTs ?? ''}`;
    if (!byPlace.has(place)) byPlace.set(place, w);
  }
  return [...byPlace.values()];
}

function joinedFrom(flat: string[]): JoinedCheck {
  const h = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) h.set(flat[i] as string, flat[i + 1] as string);
  const joined: JoinedCheck = { id: h.get('id') ?? '', openedAt: Number(h.get('at') ?? 0) };
  const by = h.get('by');
  if (by) joined.openedBy = by;
  const started = h.get('started');
  if (started) joined.startedAt = Number(started);
  return joined;
}

const shas = new Map<string, string>();

/** EVALSHA, loading the script on NOSCRIPT (a restarted or flushed Redis). */
async function runScript(redis: Redis, script: string, keys: string[], args: string[]): Promise<unknown> {
  let sha = shas.get(script);
  if (!sha) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
    return redis.eval(script, keys.length, ...keys, ...args);
  }
}
