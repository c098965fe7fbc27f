import { eventTime } from '../../features/macs/witnesses.ts';
import { slackDate, slackDateAgo } from './mrkdwn.ts';

/**
 * One time format per medium: the texts a check writes carry times as `2026-12-01 19:58 UTC`
 * (a finding's sentence), ISO 8601 (`2026-12-01T19:58:26.500Z`, evidence) or MAAS's event
 * `created` (`Sat, 28 Nov. 2026 20:00:26`, read as UTC like features/macs/witnesses.ts). In Slack
 * each becomes a date token (the reader's zone, https://docs.slack.dev/messaging/formatting-message-text#date-formatting);
 * in a file, ISO 8601.
 */
const TIME =
  /(?:\b(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z| UTC)|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} [A-Z][a-z]{2}\.? \d{4} \d{2}:\d{2}:\d{2}\b)(?: \(((?:\d+[dhms] ?)+ ago)\))?/g;

function timeOf(match: string, day?: string, hm?: string, s?: string): number {
  if (day && hm) return Date.parse(`${day}T${hm}:${s ?? '00'}Z`);
  return eventTime(match);
}

/** `as` gets the time and, when the text followed it with its age then (`(3d 4h ago)`), that age. */
function replaceTimes(text: string, as: (ms: number, writtenAge?: string) => string): string {
  return text.replace(TIME, (match: string, day?: string, hm?: string, s?: string, writtenAge?: string) => {
    const time = writtenAge ? match.slice(0, match.lastIndexOf(' (')) : match;
    const ms = timeOf(time, day, hm, s);
    return Number.isNaN(ms) ? match : as(ms, writtenAge);
  });
}

/**
 * Escaped mrkdwn with every time it names as a Slack date token; a time followed by its age
 * (`… UTC (3d 4h ago)`) gets Slack's `{ago}`, which stays true as the message ages. Run once, on
 * text without tokens.
 */
export function withDateTokens(escaped: string): string {
  return replaceTimes(escaped, (ms, writtenAge) => (writtenAge ? slackDateAgo(ms, writtenAge) : slackDate(ms)));
}

/** Plain text (a file) with every time it names in ISO 8601, UTC; an age written with it is kept. */
export function withIsoTimes(text: string): string {
  return replaceTimes(text, (ms, writtenAge) => `${new Date(ms).toISOString().replace('.000Z', 'Z')}${writtenAge ? ` (${writtenAge})` : ''}`);
}
