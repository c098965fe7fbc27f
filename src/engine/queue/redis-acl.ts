/**
 * The least Redis ACL the bot and its workers need (docs/operations.md quotes it; the failover
 * test runs under it). Keys: everything under the queue prefix, which holds the BullMQ queues and
 * job schedulers, the check dedup groups, repair plans and journals, alert state and (by default)
 * the audit stream; plus `audit.key` when the config moves the stream elsewhere. Commands: those
 * BullMQ's scripts and client call, those of our own scripts and stores, WAIT (a job is
 * acknowledged once a replica holds it), and the connection's own (ready check, client name).
 * No Pub/Sub channels, no admin or dangerous command (CONFIG, FLUSH*, KEYS, DEBUG, ACL…).
 */
export const BOT_REDIS_COMMANDS: readonly string[] = [
  // connection: ioredis's ready check (INFO), BullMQ's worker names (CLIENT SETINFO exists from Redis 7.2 only; ioredis does without)
  'ping', 'echo', 'info', 'select', 'time', 'client|setname', 'client|getname', 'client|id', 'client|info',
  // scripts (BullMQ's and ours) and transactions
  'eval', 'evalsha', 'script|load', 'script|exists', 'multi', 'exec', 'discard', 'watch', 'unwatch',
  // replication: the producer waits for a replica
  'wait',
  // keys
  'exists', 'del', 'unlink', 'type', 'rename', 'pexpire', 'pexpireat', 'expire', 'pttl', 'ttl', 'scan',
  // strings
  'get', 'set', 'mget', 'incr', 'incrby',
  // hashes
  'hset', 'hsetnx', 'hget', 'hmset', 'hmget', 'hgetall', 'hdel', 'hexists', 'hincrby', 'hlen',
  // lists
  'lpush', 'rpush', 'lpop', 'rpop', 'rpoplpush', 'lrange', 'lrem', 'llen', 'ltrim', 'lindex', 'lpos', 'lset',
  // sets
  'sadd', 'srem', 'scard', 'smembers', 'sismember',
  // sorted sets
  'zadd', 'zrem', 'zscore', 'zcard', 'zcount', 'zrange', 'zrevrange', 'zrangebyscore', 'zrevrangebyscore', 'zrangebylex', 'zlexcount',
  'zremrangebyscore', 'zremrangebyrank', 'zpopmin', 'bzpopmin',
  // streams (BullMQ events, the audit trail)
  'xadd', 'xtrim', 'xrange', 'xrevrange', 'xlen', 'xread', 'xdel',
];

/** The `ACL SETUSER` arguments (after the user name and before the password) for a prefix and an optional audit key outside it. */
export function botAclRules(prefix: string, auditKey?: string): string[] {
  const keys = [`~${prefix}:*`];
  if (auditKey && !auditKey.startsWith(`${prefix}:`)) keys.push(`~${auditKey}`, `~${auditKey}:*`);
  return [...keys, 'resetchannels', '-@all', ...BOT_REDIS_COMMANDS.map((c) => `+${c}`)];
}

/** The line for redis.conf / users.acl: `user <name> on ><password> <rules>`. */
export function botAclLine(user: string, passwordPlaceholder: string, prefix: string, auditKey?: string): string {
  return ['user', user, 'on', `>${passwordPlaceholder}`, ...botAclRules(prefix, auditKey)].join(' ');
}
