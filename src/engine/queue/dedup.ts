import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ReplyTarget } from '../notifier.ts';

/**
 * Deduplication of checks under load. BullMQ's own `deduplication` job option decides which run a
 * request shares: the first request for a (check, target) adds a job, and every identical request
 * while that job is queued or running is deduplicated into it (BullMQ frees the id when the job
 * completes or fails). What BullMQ does not do, and this file does, is the fan-out: each request
 * that joined adds its reply target to the run's waiters, and the worker posts the one result to
 * the first requester and to every waiting channel. Repairs are never shared: a plan is per request
 * and per approval.
 *
 * Keys (all under the BullMQ prefix):
 *   <prefix>:dedup:waiters:<job id>  LIST of reply targets (JSON) of the requests that joined the run
 *   <prefix>:dedup:closed:<job id>   STRING, set when the worker collects the waiters (10 min)
 * A request joins with one script that refuses a closed run: between the worker collecting the
 * waiters and BullMQ freeing the deduplication id, a request that BullMQ still sends to the old
 * run learns it is closed and queues a run of its own. None is lost between the two.
 */

/** Waiters of a run whose job never ends (lost Redis data, a job removed by hand) expire after this. */
const WAITERS_TTL_MS = 24 * 3600 * 1000;

/** How long a collected run refuses joiners: well past BullMQ freeing its deduplication id. */
const CLOSED_TTL_MS = 10 * 60 * 1000;

/** The job data field that marks a shared run (its value: the run's own job id). */
export const DEDUP_GROUP_FIELD = 'dedupGroup';

/** The check a request joined instead of queuing its own. */
export interface JoinedCheck {
  /** The job id of the check. */
  id: string;
  /** When the first request queued it (ms since the epoch). */
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

/** BullMQ's deduplication id: identical requests (one check, one target) share it. */
export function deduplicationId(jobName: string, target: string): string {
  return `${jobName}:${target}`;
}

// KEYS[1] waiters, KEYS[2] closed marker, KEYS[3] the run's job hash. ARGV[1] reply json, ARGV[2] waiters ttl ms.
// A run that is closed, or gone, is not joined (false); else the reply joins its waiters and the
// run's queued and started times and data come back.
const JOIN = `
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
local job = redis.call('HMGET', KEYS[3], 'timestamp', 'processedOn', 'data')
if not job[1] then return false end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return job
`;

// KEYS[1] waiters, KEYS[2] closed marker. ARGV[1] closed ttl ms. Closes the run to joiners and returns its waiters.
const CLOSE_AND_COLLECT = `
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return redis.call('LRANGE', KEYS[1], 0, -1)
`;

export class CheckDedup {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Adds `reply` to the waiters of run `id` of `queue`; undefined when that run is closed (or gone). */
  async join(queue: Queue, id: string, reply: ReplyTarget | undefined): Promise<JoinedCheck | undefined> {
    const answer = (await runScript(this.redis, JOIN, [this.waitersKey(id), this.closedKey(id), queue.toKey(id)], [JSON.stringify(reply ?? null), String(WAITERS_TTL_MS)])) as
      | (string | null)[]
      | null;
    if (!answer) return undefined;
    const [timestamp, processedOn, data] = answer;
    const joined: JoinedCheck = { id, openedAt: Number(timestamp ?? 0) };
    const openedBy = requesterOf(data ?? null);
    if (openedBy) joined.openedBy = openedBy;
    if (processedOn) joined.startedAt = Number(processedOn);
    return joined;
  }

  /** A request told "not queued" after all (a failover) takes its reply target back. */
  async leave(id: string, reply: ReplyTarget | undefined): Promise<void> {
    await this.redis.lrem(this.waitersKey(id), 0, JSON.stringify(reply ?? null));
  }

  /** Closes run `id` to new requesters and returns every reply target that joined it (in order). */
  async closeAndCollect(id: string): Promise<ReplyTarget[]> {
    const raw = (await runScript(this.redis, CLOSE_AND_COLLECT, [this.waitersKey(id), this.closedKey(id)], [String(CLOSED_TTL_MS)])) as string[];
    return raw.map((s) => JSON.parse(s) as ReplyTarget | null).filter((t): t is ReplyTarget => t !== null && typeof t?.channel === 'string');
  }

  /** After the result was posted: a retry of the same job (a crash before completion) would post again otherwise. */
  async forget(id: string): Promise<void> {
    await this.redis.del(this.waitersKey(id));
  }

  waitersKey(id: string): string {
    return `${this.prefix}:dedup:waiters:${id}`;
  }

  closedKey(id: string): string {
    return `${this.prefix}:dedup:closed:${id}`;
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

function requesterOf(data: string | null): string | undefined {
  try {
    const parsed = JSON.parse(data ?? 'null') as { requestedBy?: unknown } | null;
    return typeof parsed?.requestedBy === 'string' && parsed.requestedBy ? parsed.requestedBy : undefined;
  } catch {
    return undefined;
  }
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
