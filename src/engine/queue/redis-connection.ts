import { Redis, type RedisOptions } from 'ioredis';
import type { RedisSettings } from './redis-settings.ts';
import { reconnectWhenEnded } from './reconnect-when-ended.ts';

export type RedisRole = 'worker' | 'producer';

/**
 * Workers block on Redis and must retry forever (BullMQ requires maxRetriesPerRequest: null);
 * the producer fails a command after one retry, and JobQueues bounds the wait, so a user hears "Redis is down".
 * A string is a REDIS_URL (tests, tools); RedisSettings add TLS, ACL logins and Sentinel.
 */
export function createRedis(settings: RedisSettings | string, role: RedisRole): Redis {
  const s: RedisSettings = typeof settings === 'string' ? { mode: 'url', url: settings } : settings;
  const common: RedisOptions = {
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: true,
    connectTimeout: 5_000,
    lazyConnect: false,
    // A primary demoted by a failover (it came back, or Sentinel switched on purpose) refuses writes: reconnect, resend.
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    ...loginOptions(s),
    ...(s.tlsCa ? { tls: { ca: s.tlsCa } } : {}),
  };
  if (s.mode === 'url') return new Redis(s.url, { ...common, retryStrategy: (times) => Math.min(times * 200, 5_000) });
  return reconnectWhenEnded(new Redis({
    ...common,
    sentinels: s.sentinels,
    name: s.name,
    role: 'master',
    ...(s.db !== undefined ? { db: s.db } : {}),
    ...(s.sentinelUsername ? { sentinelUsername: s.sentinelUsername } : {}),
    ...(s.sentinelPassword ? { sentinelPassword: s.sentinelPassword } : {}),
    ...(s.tlsCa ? { enableTLSForSentinelMode: true, sentinelTLS: { ca: s.tlsCa } } : {}),
    // Until the sentinels promote a replica they name the dead primary: ask again soon, not at 5 s.
    retryStrategy: (times) => Math.min(times * 100, 1_000),
    sentinelRetryStrategy: (times) => Math.min(times * 200, 2_000),
    // Subscribes to the sentinels' +switch-master: reconnect at once, even when the old primary is cut off rather than dead.
    failoverDetector: true,
  }));
}

function loginOptions(s: RedisSettings): RedisOptions {
  const out: RedisOptions = {};
  if (s.username) out.username = s.username;
  if (s.password) out.password = s.password;
  return out;
}

/** True when the settings name a Sentinel-managed primary: a lost connection is a failover in progress. */
export function isSentinel(settings: RedisSettings | string): boolean {
  return typeof settings !== 'string' && settings.mode === 'sentinel';
}

export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<boolean> {
  try {
    const reply = await Promise.race([
      redis.ping(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref()),
    ]);
    return reply === 'PONG';
  } catch {
    return false;
  }
}
