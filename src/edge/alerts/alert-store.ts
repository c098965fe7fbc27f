import type { Redis } from 'ioredis';
import type { AlertRecord, Silence } from './alert-record.ts';
import { tryLock, waitForLock, type HeldLock } from './redis-lock.ts';

/**
 * Alert state in Redis, under the same key prefix as the queues:
 *   <prefix>:alerts:rec:<id>      one alert (JSON); a resolved one expires after the quiet period
 *   <prefix>:alerts:open          open alert ids, scored by when they opened
 *   <prefix>:alerts:silences      target → silence (JSON); expired entries are pruned on read
 *   <prefix>:alerts:lock:<c>:<t>  held while one (check, target) is reconciled
 *   <prefix>:scan:lock:<c>:<t>    held while one (check, target) is scanned
 */
export class AlertStore {
  constructor(
    readonly redis: Redis,
    readonly prefix: string,
  ) {}

  #key(...parts: string[]): string {
    return [this.prefix, ...parts].join(':');
  }

  async get(id: string): Promise<AlertRecord | undefined> {
    const raw = await this.redis.get(this.#key('alerts', 'rec', id));
    return raw ? (JSON.parse(raw) as AlertRecord) : undefined;
  }

  /** Stores a record and keeps the open index in step, in one transaction. */
  async save(record: AlertRecord, resolvedTtlMs: number): Promise<void> {
    const key = this.#key('alerts', 'rec', record.id);
    const openKey = this.#key('alerts', 'open');
    const tx = this.redis.multi();
    if (record.state === 'open') {
      tx.set(key, JSON.stringify(record));
      tx.zadd(openKey, record.openedAt, record.id);
    } else {
      tx.set(key, JSON.stringify(record), 'PX', Math.max(1, resolvedTtlMs));
      tx.zrem(openKey, record.id);
    }
    await tx.exec();
  }

  /** Open alerts, oldest first. */
  async open(): Promise<AlertRecord[]> {
    const ids = await this.redis.zrange(this.#key('alerts', 'open'), 0, -1);
    if (!ids.length) return [];
    const raws = await this.redis.mget(ids.map((id) => this.#key('alerts', 'rec', id)));
    return raws.flatMap((raw) => (raw ? [JSON.parse(raw) as AlertRecord] : [])).filter((r) => r.state === 'open');
  }

  async silence(silence: Silence): Promise<void> {
    await this.redis.hset(this.#key('alerts', 'silences'), silence.target, JSON.stringify(silence));
  }

  /** Lifts a silence; true when there was one. */
  async unsilence(target: string): Promise<boolean> {
    return (await this.redis.hdel(this.#key('alerts', 'silences'), target)) > 0;
  }

  async silenceFor(target: string, now: number): Promise<Silence | undefined> {
    const raw = await this.redis.hget(this.#key('alerts', 'silences'), target);
    const silence = raw ? (JSON.parse(raw) as Silence) : undefined;
    return silence && silence.until > now ? silence : undefined;
  }

  /** Silences still in force; expired ones are removed. */
  async silences(now: number): Promise<Silence[]> {
    const all = await this.redis.hgetall(this.#key('alerts', 'silences'));
    const live: Silence[] = [];
    const expired: string[] = [];
    for (const [target, raw] of Object.entries(all)) {
      const s = JSON.parse(raw) as Silence;
      if (s.until > now) live.push(s);
      else expired.push(target);
    }
    if (expired.length) await this.redis.hdel(this.#key('alerts', 'silences'), ...expired);
    return live.sort((a, b) => a.target.localeCompare(b.target));
  }

  /** Serialises reconciles of one (check, target) across processes. */
  reconcileLock(check: string, target: string, ttlMs: number, waitMs: number): Promise<HeldLock | undefined> {
    return waitForLock(this.redis, this.#key('alerts', 'lock', check, target), ttlMs, waitMs);
  }

  /** At most one scan of one (check, target) at a time; undefined when one is already running (and, with waitMs, still running after that long). */
  scanLock(check: string, target: string, ttlMs: number, waitMs = 0): Promise<HeldLock | undefined> {
    const key = this.#key('scan', 'lock', check, target);
    return waitMs > 0 ? waitForLock(this.redis, key, ttlMs, waitMs) : tryLock(this.redis, key, ttlMs);
  }
}
