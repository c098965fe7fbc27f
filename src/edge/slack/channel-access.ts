import type { WebClient } from '@slack/web-api';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { slackErrorOf } from './message-budget.ts';

/*
 * At start, for the alert channel and each command channel: can the bot post there, and read
 * there (the read-back that keeps an uncertain post from showing twice)? One
 * conversations.history call of one message each answers both without another scope: a member
 * reads; a public channel it is not in answers not_in_channel, and takes posts only through
 * chat:write.public; a private one it is not in does not exist for it (S-POST-PUBLIC,
 * S-POST-PRIVATE, S-READ-MEMBER).
 */

export interface ChannelAccess {
  channel: string;
  /** What the config uses it for. */
  roles: ('alerts' | 'commands')[];
  /** undefined: Slack's answer did not tell (rate limited, unreachable). */
  canPost: boolean | undefined;
  canRead: boolean | undefined;
  /** What to do, when something is missing. */
  advice?: string;
}

export function configuredChannels(config: Config): { channel: string; roles: ChannelAccess['roles'] }[] {
  const all = new Map<string, ChannelAccess['roles']>();
  if (config.slack.alertChannel) all.set(config.slack.alertChannel, ['alerts']);
  for (const channel of config.slack.commandChannels) all.set(channel, [...(all.get(channel) ?? []), 'commands']);
  return [...all].map(([channel, roles]) => ({ channel, roles }));
}

export async function checkChannelAccess(reader: WebClient, channels: { channel: string; roles: ChannelAccess['roles'] }[]): Promise<ChannelAccess[]> {
  const results: ChannelAccess[] = [];
  for (const { channel, roles } of channels) results.push({ channel, roles, ...(await probe(reader, channel, roles)) });
  return results;
}

async function probe(reader: WebClient, channel: string, roles: ChannelAccess['roles']): Promise<Omit<ChannelAccess, 'channel' | 'roles'>> {
  // A log line, read by whoever runs the bot: the channel as Slack writes it, not a mention mark only the Slack edge turns live.
  const invite = `invite the bot there (/invite @maas in <#${channel}>)`;
  try {
    await reader.conversations.history({ channel, limit: 1 });
    return { canPost: true, canRead: true };
  } catch (err) {
    switch (slackErrorOf(err)) {
      case 'not_in_channel':
        return { canPost: true, canRead: false, advice: `a public channel the bot is not in: it posts there (chat:write.public) but cannot read back a post Slack failed to confirm; ${invite}` };
      case 'channel_not_found':
        return {
          canPost: false,
          canRead: false,
          advice: `no such channel, or a private one the bot is not in: ${roles.includes('alerts') ? 'alerts cannot be posted' : 'answers reach only the person who asked, through the command'}; check the id or ${invite}`,
        };
      case 'missing_scope':
        return { canPost: undefined, canRead: false, advice: 'the app lacks channels:history (public) or groups:history (private): add it (manifest.yml) and reinstall the app' };
      default:
        return { canPost: undefined, canRead: undefined, advice: `Slack did not tell (${slackErrorOf(err) ?? (err as Error).message}); the check runs again at the next start` };
    }
  }
}

export function logChannelAccess(log: Logger, results: ChannelAccess[]): void {
  for (const r of results) {
    const line = { channel: r.channel, roles: r.roles, canPost: r.canPost, canRead: r.canRead };
    if (r.advice) log.warn({ ...line, advice: r.advice }, `Slack channel ${r.channel}: ${r.advice}`);
    else log.info(line, `Slack channel ${r.channel}: the bot can post and read there`);
  }
}
