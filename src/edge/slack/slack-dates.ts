import { eventTime } from '../../features/macs/witnesses.ts';
import { slackDate } from './mrkdwn.ts';

/**
 * One time format per medium: the texts a check writes carry times as `2026-12-01 19:58 UTC`
 * (a finding's sentence), ISO 8601 (`2026-12-01T19:58:26.500Z`, evidence) or MAAS's event
 * `created` (`Sat, 28 Nov. 2026 20:00:26`, read as UTC like features/macs/witnesses.ts). In Slack
 * each becomes a date token (the reader's zone, https://docs.slack.dev/messaging/formatting-message-text#date-formatting);
 * in a file, ISO 8601.
 */
const TIME =
  /\b(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z| UTC)|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} [A-Z][a-z]{2}\.? \d{4} \d{2}:\d{2}:\d{2}\b/g;

function timeOf(match: string, day?: string, hm?: string, s?: string): number {
  if (day && hm) return Date.parse(`${day}T${hm}:${s ?? '00'}Z`);
  return eventTime(match);
}

function replaceTimes(text: string, as: (ms: number) => string): string {
  return text.replace(TIME, (match: string, day?: string, hm?: string, s?: string) => {
    const ms = timeOf(match, day, hm, s);
    return Number.isNaN(ms) ? match : as(ms);
  });
}

/** Escaped mrkdwn with every time it names as a Slack date token. Run once, on text without tokens. */
export function withDateTokens(escaped: string): string {
  return replaceTimes(escaped, slackDate);
}

/** Plain text (a file) with every time it names in ISO 8601, UTC. */
export function withIsoTimes(text: string): string {
  return replaceTimes(text, (ms) => new Date(ms).toISOString().replace('.000Z', 'Z'));
}
