import type { SlackPolicy } from '../config.ts';

/**
 * CONTRACT.md section 3: `/maas` is accepted only in `commandChannels` (none listed = any channel)
 * and only from `operators` (absent = anyone in the channel). Why not, in words the user can act on.
 */
export function commandRefusal(policy: SlackPolicy, user: string, channel: string): string | undefined {
  if (policy.commandChannels.length > 0 && !policy.commandChannels.includes(channel)) {
    const where = policy.commandChannels.map((c) => `<#${c}>`).join(', ');
    return `/maas is not enabled in this channel. Use it in ${where}.`;
  }
  if (policy.operators && !policy.operators.includes(user)) {
    return `You are not a /maas operator (slack.operators in the bot's config). Ask whoever runs the bot to add your Slack user id ${user}.`;
  }
  return undefined;
}
