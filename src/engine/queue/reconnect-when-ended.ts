import type { Redis } from 'ioredis';

/** Long enough not to spin while the sentinels still agree on the new primary. */
const RECONNECT_AFTER_MS = 200;

/**
 * ioredis ends a Sentinel client for good when its failover detector sees `+switch-master` while
 * the client is asking a sentinel where the primary is (the connector is told to disconnect in
 * the middle of its own connect, and the connect fails with "Connection is closed"). From then on
 * every command fails at once, and BullMQ reconnects only its own blocking connection: the
 * process's workers and producer stay dead on a healthy new primary. Here a client that ends
 * without having been told to (disconnect or quit) connects again.
 */
export function reconnectWhenEnded(redis: Redis): Redis {
  let asked = false;
  const disconnect = redis.disconnect.bind(redis);
  const quit = redis.quit.bind(redis);
  redis.disconnect = (reconnect = false) => {
    if (!reconnect) asked = true;
    disconnect(reconnect);
  };
  redis.quit = ((callback?: Parameters<Redis['quit']>[0]) => {
    asked = true;
    return quit(callback);
  }) as Redis['quit'];
  redis.on('end', () => {
    if (asked) return;
    setTimeout(() => {
      if (!asked && redis.status === 'end') redis.connect().catch(() => undefined);
    }, RECONNECT_AFTER_MS).unref();
  });
  return redis;
}
