import type { Redis } from 'ioredis';
import type { Config } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import { entryFields, entryFromFields, normaliseEntry, type AuditEntry, type AuditInput } from './audit-entry.ts';

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

  return {
    key: options.key,
    async record(input) {
      const entry = redactDeep(normaliseEntry(input, now()), options.redact);
      log.info({ audit: entry }, `audit: ${entry.kind} ${entry.action}${entry.target ? ` ${entry.target}` : ''} by ${entry.actor}: ${entry.outcome}`);
      try {
        await withTimeout(options.redis.xadd(options.key, 'MAXLEN', '~', String(maxEntries), '*', ...entryFields(entry)), timeoutMs);
      } catch (err) {
        log.error({ audit: entry, err: describeError(err) }, 'could not append to the audit trail in Redis; the entry above is in this log only');
      }
    },
    async latest(query = {}) {
      const limit = Math.min(Math.max(1, Math.floor(query.limit ?? 20)), MAX_LIMIT);
      const found: AuditEntry[] = [];
      let end = '+';
      for (let scanned = 0; scanned < MAX_SCANNED && found.length < limit; ) {
        const page = await options.redis.xrevrange(options.key, end, '-', 'COUNT', query.target ? PAGE : limit);
        for (const [id, fields] of page) {
          const entry = entryFromFields(id, fields);
          if (!query.target || entry.target === query.target) found.push(entry);
          if (found.length >= limit) break;
        }
        scanned += page.length;
        const last = page.at(-1);
        if (!last || page.length < (query.target ? PAGE : limit)) break;
        end = `(${last[0]}`;
      }
      return found;
    },
    async range(query) {
      const limit = Math.min(Math.max(1, Math.floor(query.limit ?? MAX_RANGE)), MAX_RANGE);
      const entries: AuditEntry[] = [];
      let start = String(Math.max(0, Math.floor(query.since)));
      for (let scanned = 0; scanned < MAX_SCANNED * 5; ) {
        const page = await options.redis.xrange(options.key, start, '+', 'COUNT', PAGE);
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
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
