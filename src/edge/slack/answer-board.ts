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
  /** The bot, before posting the running answer: false when the result came first (post nothing); undefined when the board could not be read. */
  claimRunning(key: string): Promise<boolean | undefined>;
  /** The bot, once posted: false when the result took the entry meanwhile (take the answer down). */
  settleRunning(key: string, answer: RunningAnswer): Promise<boolean>;
  /**
   * The worker: the running answer once the bot says where it is, or undefined when the result is
   * to be posted anew (it came first, or the bot never said). `unknown` when the board could not
   * be read within the wait: the answer may be in the channel, so the result must not simply be posted.
   */
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
    get: async (key) => entries.get(key) ?? null,
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
 * time, the bot posts its running answer anyway (better than none), and the worker, unable to
 * learn where it is, is told `unknown` and looks for it in the channel (replace-running.ts).
 */
export function redisAnswerBoard(redis: Redis, options: RedisAnswerBoardOptions): AnswerBoard {
  const timeout = options.timeoutMs ?? 1_000;
  const keyOf = (key: string) => `${options.prefix}:slack-answer:${key}`;
  const bounded = <T>(what: string, call: Promise<T>): Promise<T | undefined> =>
    withTimeout(call, timeout).catch((err: unknown) => {
      options.log.warn({ err: describeError(err) }, `the answer board (Redis) did not answer (${what})`);
      return undefined;
    });
  return boardOver({
    get: (key) => bounded('read', redis.get(keyOf(key))),
    setIfAbsent: (key, value) => bounded('claim', redis.set(keyOf(key), value, 'PX', ENTRY_TTL_MS, 'NX').then((r) => r === 'OK')),
    replaceIf: (key, expected, value) => bounded('settle', redis.eval(REPLACE_IF, 1, keyOf(key), expected, value, String(ENTRY_TTL_MS)).then((r) => r === 1)),
  });
}

/** Each call resolves to undefined when the board did not answer; `get` to null when the entry is absent. */
interface Entries {
  get(key: string): Promise<string | null | undefined>;
  setIfAbsent(key: string, value: string): Promise<boolean | undefined>;
  replaceIf(key: string, expected: string, value: string): Promise<boolean | undefined>;
}

/** One look at the board from the worker's side. */
type Look = RunningAnswer | 'result first' | 'claimed' | 'unreadable';

function boardOver(entries: Entries): AnswerBoard {
  const look = async (key: string): Promise<Look> => {
    const value = await entries.get(key);
    if (value === undefined) return 'unreadable';
    if (value === null) {
      const took = await entries.setIfAbsent(key, RESULT);
      return took === undefined ? 'unreadable' : took ? 'result first' : 'claimed';
    }
    if (value === RESULT) return 'result first';
    return value === CLAIMED ? 'claimed' : parseAnswer(value);
  };
  return {
    // Redis away: the bot looks in the channel for the result, else posts and keeps its running answer; the worker will look in the channel too.
    claimRunning: (key) => entries.setIfAbsent(key, CLAIMED),
    settleRunning: async (key, answer) => (await entries.replaceIf(key, CLAIMED, JSON.stringify(answer))) ?? true,
    async awaitRunning(key, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const seen = await look(key);
        if (seen === 'result first') return undefined;
        if (typeof seen === 'object') return seen;
        if (Date.now() >= deadline) {
          if (seen === 'unreadable') return { at: 'unknown' };
          const took = await entries.replaceIf(key, CLAIMED, RESULT);
          if (took === undefined) return { at: 'unknown' };
          if (took) return undefined;
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
