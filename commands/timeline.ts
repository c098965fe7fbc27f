import { parseDuration } from '../src/core/duration.ts';
import { TIMELINE_JOB } from '../src/engine/audit/timeline-report.ts';
import { targetNames, unknownTargetText } from '../src/edge/alerts/alert-targets.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { mention } from '../src/core/mention.ts';

const USAGE = 'Usage: /maas timeline <site|cluster>|all [since, e.g. 2h or 1d; default 24h]';
const DEFAULT_SPAN = '24h';

/** `/maas timeline <target>|all [since]`: what happened, when, and who decided, for the handover. */
export const timelineCommand: CommandDefinition = {
  name: 'timeline',
  usage: 'timeline <site|cluster>|all [since]',
  summary: 'every event of an incident in time order (alerts, checks, plans, approvals, writes), with the whole timeline as a file',
  access: 'check',
  run: async (ctx, args) => {
    const [target, since = DEFAULT_SPAN] = args;
    if (!target || args.length > 2) return { text: USAGE, visibility: 'ephemeral', usage: true };
    const spanMs = parseDuration(since);
    if (spanMs === null) return { text: `/maas timeline: "${since.slice(0, 20)}" is not a duration. ${USAGE}`, visibility: 'ephemeral', usage: true };
    if (target !== 'all' && !targetNames(ctx.config, target).length) return { text: `/maas timeline: ${unknownTargetText(ctx.config, target)}`, visibility: 'ephemeral' };
    const reply = { channel: ctx.channel, user: ctx.user, ...(ctx.responseUrl ? { responseUrl: ctx.responseUrl, replaceRunning: true, askedAt: Date.now() } : {}) };
    await ctx.enqueue(TIMELINE_JOB, { target, spanMs, reply, requestedBy: ctx.user });
    return { text: `${mention(ctx.user)} asked for the timeline of \`${target}\` since ${since} ago: gathering it, it will be posted here.`, visibility: 'in_channel', replacedByResult: Boolean(ctx.responseUrl) };
  },
};
