import { isUserGroupId, type SlackPolicy } from '../../core/config.ts';
import { checkListed, describeListed, type UserGroupReader } from './user-groups.ts';
import { channelMention } from '../../core/mention.ts';

/**
 * What a subcommand may do: `check` reads and changes nothing (sites, the checks, scan, alerts, audit);
 * `repair` changes something (fix-* plans, silences). `slack.permissions` grants each kind separately.
 */
export type CommandAccess = 'check' | 'repair';

/** Subcommands that change state although their name does not start with `fix-`. */
const REPAIR_NAMES = new Set(['silence']);

/** The access a subcommand needs: what it declares, else `repair` for fix-* and silence, else `check`. */
export function commandAccess(name: string, declared?: CommandAccess): CommandAccess {
  if (declared) return declared;
  return name.startsWith('fix-') || REPAIR_NAMES.has(name) ? 'repair' : 'check';
}

export interface SubcommandRef {
  name: string;
  access?: CommandAccess;
}

/**
 * docs/configuration.md: `/maas` is accepted only in `commandChannels` (none listed = any channel)
 * and only from `operators` (absent = anyone in the channel); then `slack.permissions` decides
 * whether this operator may run this kind of subcommand. `help` is never refused to an operator.
 * Why not, in words the user can act on.
 */
export async function commandRefusal(policy: SlackPolicy, user: string, channel: string, subcommand?: SubcommandRef, groups?: UserGroupReader): Promise<string | undefined> {
  if (policy.commandChannels.length > 0 && !policy.commandChannels.includes(channel)) {
    const where = policy.commandChannels.map((c) => channelMention(c)).join(', ');
    return `/maas is not enabled in this channel. Use it in ${where}.`;
  }
  if (policy.operators) {
    const operator = await checkListed(policy.operators, user, groups);
    if (!operator.listed) return `You are not a /maas operator (slack.operators in the bot's config). Ask whoever runs the bot to add your Slack user id ${user}.${unreadableNote('operators', operator.unreadable)}`;
  }
  if (!subcommand || subcommand.name === 'help') return undefined;
  return permissionRefusal(policy, user, subcommand.name, commandAccess(subcommand.name, subcommand.access), groups);
}

/** Why a listed group granted nothing: ` The operators group S0… could not be read: missing_scope usergroups:read, …` */
export function unreadableNote(list: string, unreadable: readonly string[]): string {
  return unreadable.map((u) => ` The ${list} group ${u}, so it grants nothing until it can be read (the bot needs the usergroups:read scope).`).join('');
}

async function permissionRefusal(policy: SlackPolicy, user: string, name: string, access: CommandAccess, groups: UserGroupReader | undefined): Promise<string | undefined> {
  const allowed = access === 'check' ? policy.permissions?.checks : policy.permissions?.repairs;
  if (!allowed) return undefined;
  const check = await checkListed(allowed, user, groups);
  if (check.listed) return undefined;
  const key = `slack.permissions.${access === 'check' ? 'checks' : 'repairs'}`;
  const note = unreadableNote(key, check.unreadable);
  if (access === 'check') {
    return `\`/maas ${name}\` is a read-only check, and you may not run checks (${key} in the bot's config). Ask whoever runs the bot to add your Slack user id ${user}.${note}`;
  }
  if (!allowed.length) {
    return `\`/maas ${name}\` changes things, and nobody may run repairs from Slack (${key} is empty). Run \`maas-chatops ${name}\` from a terminal, or ask whoever runs the bot to grant it.`;
  }
  return `\`/maas ${name}\` changes things, and you do not have the repair permission (${key} in the bot's config). Ask one of ${describeListed(allowed)} to run it, or ask whoever runs the bot to add your Slack user id ${user}.${note}`;
}

/**
 * Whether this user may run repairs from Slack at all (any channel where /maas is enabled): the Plan
 * button is shown to them. A listed user group may hold them, so it shows the button; the click is
 * authorized again.
 */
export function mayRunRepairs(policy: SlackPolicy, user: string | undefined): boolean {
  const mayBeIn = (list: string[]) => list.includes(user ?? '') || list.some(isUserGroupId);
  if (!user || (policy.operators && !mayBeIn(policy.operators))) return false;
  const allowed = policy.permissions?.repairs;
  return !allowed || mayBeIn(allowed);
}
