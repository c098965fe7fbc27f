import { liveMentions } from '../../core/mention.ts';
import { oneLine } from '../../core/one-line.ts';

/**
 * Slack mrkdwn text helpers. Slack reads `<...>` as links, mentions and `<!channel>`
 * broadcasts; only `&`, `<` and `>` need escaping to show text as typed
 * (https://docs.slack.dev/messaging/formatting-message-text#escaping).
 */

export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes text meant for people: every `<…>` shows as typed (`<!channel>`, links, and mentions
 * that came from outside); only the bot's own mentions, written with mention(), are live.
 */
export function toSlackText(text: string): string {
  return liveMentions(escapeMrkdwn(text));
}

/** Outside text shown inside a line: escaped, and on one line. */
export function inline(text: string): string {
  return escapeMrkdwn(oneLine(text));
}

/**
 * Text as a `code span` of at most `max` characters, on one line: a backtick inside would end the
 * span early, and every run of white space or line breaks (NEL too) is one space.
 */
export function codeSpan(text: string, max = Number.POSITIVE_INFINITY): string {
  const inner = escapeMrkdwn(text.replace(/`/g, "'").replace(/[\s\u0085]+/g, ' ').trim()) || ' ';
  return `\`${clipText(inner, Math.max(1, max - 2))}\``;
}

const ELLIPSIS = '…';

/**
 * Shortens already-escaped mrkdwn to at most `max` characters (UTF-16 units, as Slack counts):
 * at a space when there is one, never inside an `&amp;`-style entity or a surrogate pair,
 * with an ellipsis to show that something was left out.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= ELLIPSIS.length) return ELLIPSIS.slice(0, Math.max(0, max));
  const room = max - ELLIPSIS.length;
  const head = text.slice(0, room + 1);
  const space = head.search(/\s\S*$/);
  let cut = space > room / 2 ? space : room;
  cut = backOffEntity(text, cut);
  if (cut > 0 && isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
  return text.slice(0, cut).replace(/\s+$/, '') + ELLIPSIS;
}

function backOffEntity(text: string, cut: number): number {
  const amp = text.lastIndexOf('&', cut - 1);
  if (amp === -1) return cut;
  const semi = text.indexOf(';', amp);
  return semi !== -1 && semi >= cut && semi - amp <= 5 ? amp : cut;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Clips a line that carries markup of its own (`*bold*`, `code`): the markup is rebuilt
 * around the shortened content rather than cut through.
 */
export function clipInside(prefix: string, content: string, suffix: string, max: number): string {
  const room = max - prefix.length - suffix.length;
  if (room <= ELLIPSIS.length) return clipText(prefix + suffix, max);
  return prefix + clipText(content, room) + suffix;
}

/** A Slack date token: each reader sees their own time zone; clients that cannot show it read the UTC fallback. */
export function slackDate(ms: number): string {
  return dateToken(ms, '{date_short_pretty} {time_secs}', utcSeconds(ms));
}

/**
 * A date token that also says how long ago it was: Slack's `{ago}` (`3 minutes ago`) stays true
 * as the message ages, where a written "(3m ago)" would not. `writtenAge`, the age when the text
 * was written, goes only in the fallback.
 */
export function slackDateAgo(ms: number, writtenAge?: string): string {
  return dateToken(ms, '{date_short_pretty} {time_secs} ({ago})', `${utcSeconds(ms)}${writtenAge ? ` (${writtenAge})` : ''}`);
}

function dateToken(ms: number, format: string, fallback: string): string {
  return `<!date^${Math.floor(ms / 1000)}^${format}|${fallback}>`;
}

function utcSeconds(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A time inside text still to be escaped: `withSlackDates` turns it into a date token after escaping, `withUtcDates` into UTC. */
export function dateMark(ms: number): string {
  return `\uE000${Math.round(ms)}\uE000`;
}

const DATE_MARK = /\uE000(\d+)\uE000/g;

/** Escaped text (toSlackText) with its date marks as Slack date tokens. */
export function withSlackDates(escaped: string): string {
  return escaped.replace(DATE_MARK, (_m, ms: string) => slackDate(Number(ms)));
}

/** Text with its date marks in UTC, for the audit trail and logs. */
export function withUtcDates(text: string): string {
  return text.replace(DATE_MARK, (_m, ms: string) => `${new Date(Number(ms)).toISOString().slice(0, 16).replace('T', ' ')} UTC`);
}
