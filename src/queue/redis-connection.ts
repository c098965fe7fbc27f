import { Redis } from 'ioredis';

export type RedisRole = 'worker' | 'producer';

/**
 * Workers block on Redis and must retry forever (BullMQ requires maxRetriesPerRequest: null);
 * the producer fails a command after one retry, and JobQueues bounds the wait, so a user hears "Redis is down".
 */
export function createRedis(url: string, role: RedisRole): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    enableOfflineQueue: true,
    connectTimeout: 5_000,
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    lazyConnect: false,
  });
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
