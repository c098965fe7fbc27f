import type { WebClient } from '@slack/web-api';
import { isUserGroupId } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import { withTimeout } from '../../core/with-timeout.ts';
import { mention } from '../../core/mention.ts';

/** A group's members as Slack last said, or why they could not be read. */
export type GroupMembers = { ok: true; users: ReadonlySet<string> } | { ok: false; reason: string };

export interface UserGroupReader {
  members(group: string): Promise<GroupMembers>;
}

export interface UserGroupReaderOptions {
  /** usergroups.users.list (S-USERGROUP-MEMBERS): the member ids, or it throws. */
  list: (group: string) => Promise<string[]>;
  /** How long members once read stand for the group. */
  ttlMs: number;
  /** Clock for the cache; tests move it. */
  now?: () => number;
}

const DEFAULT_TTL_MS = 5 * 60_000;
const READ_TIMEOUT_MS = 5_000;

/**
 * Members read once per group per `ttlMs`; concurrent clicks share one read. A failed read is not
 * kept, so a scope granted a minute later works at once.
 */
export function cachedUserGroups(options: UserGroupReaderOptions): UserGroupReader {
  const now = options.now ?? Date.now;
  const cache = new Map<string, { until: number; members: Promise<GroupMembers> }>();
  return {
    members(group) {
      const hit = cache.get(group);
      if (hit && hit.until > now()) return hit.members;
      const members = read(options.list, group);
      cache.set(group, { until: now() + options.ttlMs, members });
      void members.then((m) => {
        if (!m.ok && cache.get(group)?.members === members) cache.delete(group);
      });
      return members;
    },
  };
}

/** The reader over the bot's Web API reads client (no retries: a click waits on it). */
export function slackUserGroups(reader: WebClient, ttlMs = DEFAULT_TTL_MS, now?: () => number): UserGroupReader {
  const list = async (usergroup: string) => (await reader.usergroups.users.list({ usergroup })).users ?? [];
  return cachedUserGroups({ list, ttlMs, ...(now ? { now } : {}) });
}

async function read(list: UserGroupReaderOptions['list'], group: string): Promise<GroupMembers> {
  try {
    const users = await withTimeout(list(group), READ_TIMEOUT_MS, () => new Error(`Slack did not answer within ${READ_TIMEOUT_MS / 1000} s`));
    return { ok: true, users: new Set(users) };
  } catch (err) {
    return { ok: false, reason: slackReason(err) };
  }
}

/** Slack's code and the scope it needs (`missing_scope usergroups:read`), else the error in words. */
function slackReason(err: unknown): string {
  const data = (err as { data?: { error?: unknown; needed?: unknown } }).data;
  if (typeof data?.error === 'string') return typeof data.needed === 'string' ? `${data.error} ${data.needed}` : data.error;
  return describeError(err);
}

/** Whether `user` is in a config list of users and groups, and which of its groups could not be read. */
export interface ListedCheck {
  listed: boolean;
  /** `S0… could not be read: missing_scope usergroups:read`, one per unreadable group. */
  unreadable: string[];
}

export async function checkListed(list: readonly string[], user: string, groups: UserGroupReader | undefined): Promise<ListedCheck> {
  if (list.includes(user)) return { listed: true, unreadable: [] };
  const unreadable: string[] = [];
  for (const group of list.filter(isUserGroupId)) {
    const members: GroupMembers = groups ? await groups.members(group) : { ok: false, reason: 'user groups are not read here' };
    if (members.ok && members.users.has(user)) return { listed: true, unreadable: [] };
    if (!members.ok) unreadable.push(`${group} could not be read: ${members.reason}`);
  }
  return { listed: false, unreadable };
}

/** The people of a list as mentions, its groups by id: an ephemeral refusal never pings a whole group. */
export function describeListed(list: readonly string[]): string {
  return list
    .slice(0, 5)
    .map((entry) => (isUserGroupId(entry) ? `the members of user group ${entry}` : mention(entry)))
    .join(', ');
}
