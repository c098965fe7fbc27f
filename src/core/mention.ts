import { randomBytes } from 'node:crypto';

/*
 * Slack reads `<@U…>` in text as a live mention. Outside text (a hostname, a MAAS error body, what
 * a user typed) is escaped wherever it is shown, so the only live mentions are the ones the bot
 * writes itself: it writes them with mention(), a mark carrying a nonce made at start, which text
 * from outside cannot guess; the Slack edge turns exactly those marks into mentions after escaping.
 */

const NONCE = randomBytes(8).toString('hex');
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;
const CHANNEL_ID = /^[CG][A-Z0-9]{2,20}$/;
const MARK = new RegExp(`\\uE002${NONCE}([@#])([A-Z0-9]{3,21})\\uE002`, 'g');

/** A Slack user the bot means to mention; anything that is not a user id stays text. */
export function mention(userId: string): string {
  return USER_ID.test(userId) ? `\uE002${NONCE}@${userId}\uE002` : userId;
}

/** A Slack channel the bot means to link. */
export function channelMention(channelId: string): string {
  return CHANNEL_ID.test(channelId) ? `\uE002${NONCE}#${channelId}\uE002` : channelId;
}

/** Escaped mrkdwn with the bot's own marks as Slack mentions. */
export function liveMentions(escaped: string): string {
  return escaped.replace(MARK, (_m, sigil: string, id: string) => `<${sigil}${id}>`);
}

/** The marks as plain `@U…` / `#C…`, for the audit trail, logs and terminals. */
export function plainMentions(text: string): string {
  return text.replace(MARK, (_m, sigil: string, id: string) => `${sigil}${id}`);
}
