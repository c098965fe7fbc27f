import type { Redis } from 'ioredis';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { withTimeout } from '../../core/with-timeout.ts';

/*
 * Slack allows about one message a second per channel for the whole app, the bot and every
 * worker together, with short bursts above it (docs/slack-behaviour.md, S-POST-RATE). Before each
 * post to a channel the sender reserves the channel's next free slot: in one process a clock in
 * memory does, across processes a slot kept in Redis. Background traffic (alerts, the thread of
 * an `all` answer) waits for its slot; what a person is waiting for (a command's answer, its
 * result, a plan) goes at once, a burst Slack allows, and still takes a slot, so the background
 * traffic after it makes room.
 */
/** About one message a second per channel, with a little room (S-POST-RATE). */
export const CHANNEL_INTERVAL_MS = 1100;

export interface ChannelPacer {
  /** Milliseconds to wait before this post to `channel` may go out (its slot is then taken); 0 for an urgent post, which takes the next slot without waiting. */
  reserve(channel: string, urgent?: boolean): Promise<number>;
}

/** One process: the next free slot of each channel, in memory. */
export function localPacer(intervalMs: number, now: () => number = Date.now): ChannelPacer {
  const next = new Map<string, number>();
  return {
    reserve: async (channel, urgent = false) => {
      const t = now();
      const slot = Math.max(t, next.get(channel) ?? 0);
      next.set(channel, slot + intervalMs);
      return urgent ? 0 : slot - t;
    },
  };
}

// KEYS[1] the channel's next free slot (ms, Redis's clock). ARGV[1] interval ms, ARGV[2] '1' when urgent. Returns the wait.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local slot = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
redis.call('SET', KEYS[1], tostring(slot + tonumber(ARGV[1])), 'PX', tonumber(ARGV[1]) + 60000)
if ARGV[2] == '1' then return 0 end
return slot - now`;

export interface RedisPacerOptions {
  prefix: string;
  intervalMs: number;
  log: Logger;
  /** How long a reservation may take before the process paces alone; default 500 ms. */
  timeoutMs?: number;
}

/** Every process of one app: the slots in Redis, on Redis's clock. Redis slow or away: this process's own clock paces. */
export function redisPacer(redis: Redis, options: RedisPacerOptions): ChannelPacer {
  const fallback = localPacer(options.intervalMs);
  const timeout = options.timeoutMs ?? 500;
  let warned = 0;
  return {
    async reserve(channel, urgent = false) {
      try {
        const wait = await withTimeout(redis.eval(RESERVE, 1, `${options.prefix}:slack-pace:${channel}`, String(options.intervalMs), urgent ? '1' : '0'), timeout);
        return Math.max(0, Number(wait) || 0);
      } catch (err) {
        if (Date.now() - warned > 60_000) options.log.warn({ err: describeError(err) }, 'channel pacing in Redis is unavailable: this process paces alone');
        warned = Date.now();
        return fallback.reserve(channel, urgent);
      }
    },
  };
}
