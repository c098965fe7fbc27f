import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { withTimeout } from '../../core/with-timeout.ts';

/*
 * Where a command's "running" answer went, shared by the bot that posts it and the worker whose
 * result replaces it (with chat.update: a slash command's response_url cannot replace, see
 * docs/slack-behaviour.md). Whichever comes first claims the command's entry, so a fast result
 * and the running answer never both show: a result that finds the entry empty posts itself, and
 * the bot then posts no running answer; a running answer that lost its claim while being posted
 * is taken down again.
 */

/** Where the running answer is: the bot's own message, an ephemeral note through the response_url, or not known. */
export type RunningAnswer = { at: 'message'; ts: string } | { at: 'response_url' } | { at: 'unknown' };

export interface AnswerBoard {
  /** The bot, before posting the running answer: false when the result came first (post nothing). */
  claimRunning(key: string): Promise<boolean>;
  /** The bot, once posted: false when the result took the entry meanwhile (take the answer down). */
  settleRunning(key: string, answer: RunningAnswer): Promise<boolean>;
  /** The worker: the running answer once the bot says where it is, or undefined when the result is to be posted anew. */
  awaitRunning(key: string, waitMs: number): Promise<RunningAnswer | undefined>;
}

/** The entry of one command: a hash of its response_url (valid 30 minutes, no secret once hashed). */
export function answerKey(responseUrl: string): string {
  return createHash('sha256').update(responseUrl).digest('hex').slice(0, 24);
}

const CLAIMED = 'claimed';
const RESULT = 'result';
/** A response_url lasts 30 minutes; the entry a little longer. */
const ENTRY_TTL_MS = 31 * 60_000;
const POLL_MS = 100;

/** One process (serve, tests): the board in memory. */
export function memoryAnswerBoard(): AnswerBoard {
  const entries = new Map<string, string>();
  return boardOver({
    get: async (key) => entries.get(key),
    setIfAbsent: async (key, value) => (entries.has(key) ? false : (entries.set(key, value), true)),
    replaceIf: async (key, expected, value) => (entries.get(key) === expected ? (entries.set(key, value), true) : false),
  });
}

export interface RedisAnswerBoardOptions {
  prefix: string;
  log: Logger;
  /** Each Redis call waits at most this long; default 1 s. */
  timeoutMs?: number;
}

const REPLACE_IF = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;

/**
 * Bot and workers in separate processes: the board in Redis. When Redis does not answer in
 * time, the bot posts its running answer anyway and the worker posts its result anew: two
 * messages, logged, rather than none.
 */
export function redisAnswerBoard(redis: Redis, options: RedisAnswerBoardOptions): AnswerBoard {
  const timeout = options.timeoutMs ?? 1_000;
  const keyOf = (key: string) => `${options.prefix}:slack-answer:${key}`;
  const bounded = <T>(what: string, call: Promise<T>, fallback: T): Promise<T> =>
    withTimeout(call, timeout).catch((err: unknown) => {
      options.log.warn({ err: describeError(err) }, `the answer board (Redis) did not answer (${what}): delivering without it`);
      return fallback;
    });
  return boardOver({
    get: (key) => bounded('read', redis.get(keyOf(key)).then((v) => v ?? undefined), undefined),
    setIfAbsent: (key, value) => bounded('claim', redis.set(keyOf(key), value, 'PX', ENTRY_TTL_MS, 'NX').then((r) => r === 'OK'), true),
    replaceIf: (key, expected, value) => bounded('settle', redis.eval(REPLACE_IF, 1, keyOf(key), expected, value, String(ENTRY_TTL_MS)).then((r) => r === 1), true),
  });
}

interface Entries {
  get(key: string): Promise<string | undefined>;
  setIfAbsent(key: string, value: string): Promise<boolean>;
  replaceIf(key: string, expected: string, value: string): Promise<boolean>;
}

function boardOver(entries: Entries): AnswerBoard {
  return {
    claimRunning: (key) => entries.setIfAbsent(key, CLAIMED),
    settleRunning: (key, answer) => entries.replaceIf(key, CLAIMED, JSON.stringify(answer)),
    async awaitRunning(key, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const value = await entries.get(key);
        if (value === undefined) {
          if (await entries.setIfAbsent(key, RESULT)) return undefined;
          continue;
        }
        if (value === RESULT) return undefined;
        if (value !== CLAIMED) return parseAnswer(value);
        if (Date.now() >= deadline) {
          if (await entries.replaceIf(key, CLAIMED, RESULT)) return undefined;
          continue;
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
  };
}

function parseAnswer(value: string): RunningAnswer {
  try {
    const parsed = JSON.parse(value) as RunningAnswer;
    if (parsed.at === 'message' && typeof parsed.ts === 'string') return { at: 'message', ts: parsed.ts };
    if (parsed.at === 'response_url') return { at: 'response_url' };
  } catch {
    // an entry written by another version: treated as unknown
  }
  return { at: 'unknown' };
}
