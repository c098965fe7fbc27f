import type { Redis } from 'ioredis';
import type { Config } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import { entryFields, entryFromFields, normaliseEntry, type AuditEntry, type AuditInput, type AuditKind } from './audit-entry.ts';

/** What repairs, approvals, alerts and the Slack command path call. Never throws. */
export interface AuditRecorder {
  record(entry: AuditInput): Promise<void>;
}

export interface AuditQuery {
  /** Only entries about this site or cluster. */
  target?: string;
  /** At most this many, newest first; default 20, at most 500. */
  limit?: number;
}

export interface AuditRange {
  /** Only entries about this site or cluster. */
  target?: string;
  /** Only entries at or after this time (ms since the epoch). */
  since: number;
  /** At most this many, oldest first; default and ceiling MAX_RANGE. */
  limit?: number;
}

export interface AuditLog extends AuditRecorder {
  /** The Redis stream key. */
  readonly key: string;
  /** The newest entries first. */
  latest(query?: AuditQuery): Promise<AuditEntry[]>;
  /** The entries since a time, oldest first: a timeline's raw material. */
  range(query: AuditRange): Promise<{ entries: AuditEntry[]; truncated: boolean }>;
}

export interface AuditLogOptions {
  redis: Redis;
  /** auditKey(config, prefix). */
  key: string;
  /** XADD MAXLEN ~ this; default 10 000. */
  maxEntries?: number;
  log: Logger;
  redact: Redactor;
  /** How long record() waits for Redis before giving up (the entry is still in the log); default 2 s. */
  timeoutMs?: number;
  now?: () => number;
}

export const DEFAULT_AUDIT_ENTRIES = 10_000;
/** Refusals written per actor in each window; the rest are only counted. */
export const REFUSAL_SAMPLE_PER_ACTOR = 20;
const REFUSAL_WINDOW_MS = 60 * 60_000;
/** The sampled refusals are a stream of their own, trimmed to about this many. */
const MAX_REFUSAL_ENTRIES = 1_000;

/**
 * Where an entry goes. Decisions (a plan posted, approved or rejected, each write, and how the
 * repair ended) are never trimmed by anything but decisions; commands and alerts have their stream;
 * refusals (anyone can cause them, in bulk, without logging in) are counted per actor and only a
 * sample is written, to a stream of their own. A Record, so a new kind does not compile until it
 * is given a stream.
 */
const STREAM_OF: Record<AuditKind, 'decisions' | 'activity' | 'refusals'> = {
  plan: 'decisions',
  approval: 'decisions',
  rejection: 'decisions',
  'repair-step': 'decisions',
  repair: 'decisions',
  command: 'activity',
  alert: 'activity',
  check: 'activity',
  refusal: 'refusals',
};

function streamKeys(key: string): { decisions: string; activity: string; refusals: string; counts: string } {
  return { decisions: key, activity: `${key}:activity`, refusals: `${key}:refusals`, counts: `${key}:refusal-counts` };
}

/** Every key the audit trail writes under its stream key (for clean-up and ACLs). */
export function auditKeys(key: string): string[] {
  return Object.values(streamKeys(key));
}
const MAX_LIMIT = 500;
/** latest({ target }) reads at most this many entries looking for matches. */
const MAX_SCANNED = 20_000;
const PAGE = 500;
/** range() returns at most this many entries; a timeline says when it stopped there. */
export const MAX_RANGE = 10_000;

/** The stream key: `audit.key` from the config, else under the BullMQ prefix. */
export function auditKey(config: Pick<Config, 'audit'>, prefix: string): string {
  return config.audit?.key ?? `${prefix}:audit`;
}

/**
 * The audit trail: an append-only Redis stream, trimmed to about `maxEntries` (XADD MAXLEN ~),
 * every entry also written to the log. Entries pass through the redactor before they go anywhere.
 */
export function createAuditLog(options: AuditLogOptions): AuditLog {
  const log = options.log.child({ component: 'audit' });
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? DEFAULT_AUDIT_ENTRIES;
  const timeoutMs = options.timeoutMs ?? 2_000;

  const keys = streamKeys(options.key);
  const redis = options.redis;

  /** Counts the refusal; true when it is one of its actor's sample in this window. */
  async function sampleRefusal(actor: string): Promise<boolean> {
    const window = `${keys.counts}:window:${actor}`;
    const result = await redis.multi().hincrby(keys.counts, 'total', 1).hincrby(keys.counts, `actor:${actor}`, 1).incr(window).exec();
    const inWindow = Number(result?.[2]?.[1] ?? 0);
    if (inWindow === 1) await redis.pexpire(window, REFUSAL_WINDOW_MS);
    return inWindow <= REFUSAL_SAMPLE_PER_ACTOR;
  }

  async function append(entry: Omit<AuditEntry, 'id'>): Promise<void> {
    const stream = STREAM_OF[entry.kind];
    if (stream === 'refusals') {
      if (await sampleRefusal(entry.actor)) await redis.xadd(keys.refusals, 'MAXLEN', '~', String(MAX_REFUSAL_ENTRIES), '*', ...entryFields(entry));
      return;
    }
    await redis.xadd(keys[stream], 'MAXLEN', '~', String(maxEntries), '*', ...entryFields(entry));
  }

  return {
    key: options.key,
    async record(input) {
      const entry = redactDeep(normaliseEntry(input, now()), options.redact);
      log.info({ audit: entry }, `audit: ${entry.kind} ${entry.action}${entry.target ? ` ${entry.target}` : ''} by ${entry.actor}: ${entry.outcome}`);
      try {
        await withTimeout(append(entry), timeoutMs);
      } catch (err) {
        log.error({ audit: entry, err: describeError(err) }, 'could not append to the audit trail in Redis; the entry above is in this log only');
      }
    },
    async latest(query = {}) {
      const limit = Math.min(Math.max(1, Math.floor(query.limit ?? 20)), MAX_LIMIT);
      const streams = await Promise.all([keys.decisions, keys.activity, keys.refusals].map((key) => latestOf(redis, key, query.target, limit)));
      return streams
        .flat()
        .sort((a, b) => compareStreamIds(b.id, a.id))
        .slice(0, limit);
    },
    async range(query) {
      const limit = Math.min(Math.max(1, Math.floor(query.limit ?? MAX_RANGE)), MAX_RANGE);
      const streams = await Promise.all([keys.decisions, keys.activity, keys.refusals].map((key) => rangeOf(redis, key, query, limit)));
      const entries = streams.flatMap((s) => s.entries).sort((a, b) => a.at - b.at || compareStreamIds(a.id, b.id));
      return { entries: entries.slice(0, limit), truncated: entries.length > limit || streams.some((s) => s.truncated) };
    },
  };
}

/** One stream's entries at or after `since` (about `target` when given), oldest first. */
async function rangeOf(redis: Redis, key: string, query: AuditRange, limit: number): Promise<{ entries: AuditEntry[]; truncated: boolean }> {
  const entries: AuditEntry[] = [];
  let start = String(Math.max(0, Math.floor(query.since)));
  for (let scanned = 0; scanned < MAX_SCANNED * 5; ) {
    const page = await redis.xrange(key, start, '+', 'COUNT', PAGE);
    for (const [id, fields] of page) {
      const entry = entryFromFields(id, fields);
      // The stream id is when it was appended, at or after the event: `at` decides.
      if (entry.at < query.since || (query.target && entry.target !== query.target)) continue;
      if (entries.length >= limit) return { entries, truncated: true };
      entries.push(entry);
    }
    scanned += page.length;
    const last = page.at(-1);
    if (!last || page.length < PAGE) break;
    start = `(${last[0]}`;
  }
  return { entries, truncated: false };
}

/** The newest `limit` entries of one stream (about `target` when given), newest first. */
async function latestOf(redis: Redis, key: string, target: string | undefined, limit: number): Promise<AuditEntry[]> {
  const found: AuditEntry[] = [];
  let end = '+';
  const count = target ? PAGE : limit;
  for (let scanned = 0; scanned < MAX_SCANNED && found.length < limit; ) {
    const page = await redis.xrevrange(key, end, '-', 'COUNT', count);
    for (const [id, fields] of page) {
      const entry = entryFromFields(id, fields);
      if (!target || entry.target === target) found.push(entry);
      if (found.length >= limit) break;
    }
    scanned += page.length;
    const last = page.at(-1);
    if (!last || page.length < count) break;
    end = `(${last[0]}`;
  }
  return found;
}

function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
