import type { WebClient } from '@slack/web-api';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { INVITE_COMMAND } from './invite.ts';
import { slackErrorOf } from './message-budget.ts';

/*
 * At start, for the alert channel and each command channel: can the bot post there, and read
 * there (the read-back that keeps an uncertain post from showing twice)? conversations.info says
 * whether the channel is private and whether the bot is a member (S-CHANNEL-INFO), and its answer
 * carries the token's scopes (S-SCOPES-HEADER): a member posts, and reads with channels:history
 * (groups:history in a private channel); in a public channel it is not in, the bot posts only with
 * chat:write.public (S-POST-PUBLIC); a private one it is not in does not exist for it, and only
 * `/invite` lets it in (S-POST-PRIVATE). An app installed without channels:read / groups:read is
 * probed with one history read instead, as before those scopes were asked for.
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

type Probe = Omit<ChannelAccess, 'channel' | 'roles'>;

async function probe(reader: WebClient, channel: string, roles: ChannelAccess['roles']): Promise<Probe> {
  try {
    const info = await reader.conversations.info({ channel });
    const scopes = info.response_metadata?.scopes;
    const granted = (scope: string) => (scopes ? scopes.includes(scope) : undefined);
    return fromInfo(channel, { private: info.channel?.is_private === true, member: info.channel?.is_member === true }, granted);
  } catch (err) {
    const code = slackErrorOf(err);
    if (code === 'channel_not_found') return notFound(channel, roles);
    if (code === 'missing_scope') return probeByHistory(reader, channel, roles);
    return unknown(err);
  }
}

function fromInfo(channel: string, c: { private: boolean; member: boolean }, granted: (scope: string) => boolean | undefined): Probe {
  const history = c.private ? 'groups:history' : 'channels:history';
  if (c.member) {
    const canRead = granted(history);
    return canRead === false ? { canPost: true, canRead, advice: `the app lacks ${history}: a post Slack failed to confirm cannot be read back; add it (manifest.yml) and reinstall the app` } : { canPost: true, canRead };
  }
  if (c.private) return { canPost: false, canRead: false, advice: `a private channel the bot is not in: nothing can be posted there; ${invite(channel)}` };
  const canPost = granted('chat:write.public');
  if (canPost === false) {
    return { canPost, canRead: false, advice: `a public channel the bot is not in, and the app lacks chat:write.public: nothing can be posted there; ${invite(channel)}, or add chat:write.public (manifest.yml) and reinstall the app` };
  }
  return { canPost, canRead: false, advice: `a public channel the bot is not in: it posts there (chat:write.public) but cannot read back a post Slack failed to confirm; ${invite(channel)}` };
}

// A log line, read by whoever runs the bot: the channel as Slack writes it, not a mention mark only the Slack edge turns live.
function invite(channel: string): string {
  return `invite the bot there (${INVITE_COMMAND} in <#${channel}>)`;
}

function notFound(channel: string, roles: ChannelAccess['roles']): Probe {
  const lost = roles.includes('alerts') ? 'alerts cannot be posted' : 'answers reach only the person who asked, through the command';
  return { canPost: false, canRead: false, advice: `no such channel, or a private one the bot is not in: ${lost}; check the id or ${invite(channel)}` };
}

function unknown(err: unknown): Probe {
  return { canPost: undefined, canRead: undefined, advice: `Slack did not tell (${slackErrorOf(err) ?? (err as Error).message}); the check runs again at the next start` };
}

/** Without channels:read / groups:read: one history read of one message answers both questions, less surely. */
async function probeByHistory(reader: WebClient, channel: string, roles: ChannelAccess['roles']): Promise<Probe> {
  const noInfo = 'the app lacks channels:read or groups:read (add them, manifest.yml, and reinstall the app)';
  try {
    await reader.conversations.history({ channel, limit: 1 });
    return { canPost: true, canRead: true, advice: `${noInfo}; a history read says the bot posts and reads here` };
  } catch (err) {
    switch (slackErrorOf(err)) {
      case 'not_in_channel':
        return { canPost: undefined, canRead: false, advice: `${noInfo}; a public channel the bot is not in: it posts there only with chat:write.public; ${invite(channel)}` };
      case 'channel_not_found':
        return notFound(channel, roles);
      case 'missing_scope':
        return { canPost: undefined, canRead: false, advice: `${noInfo}, and channels:history (public) or groups:history (private)` };
      default:
        return unknown(err);
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
