import { auditTextForSlack } from '../src/engine/audit/audit-text.ts';
import { targetNames, unknownTargetText } from '../src/edge/alerts/alert-targets.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';

const USAGE = 'Usage: /maas audit [site|cluster]';
const SHOWN = 20;

/** `/maas audit [target]`: the newest entries of the audit trail, to the requester only. */
export const auditCommand: CommandDefinition = {
  name: 'audit',
  usage: 'audit [site|cluster]',
  summary: 'who did what lately: commands, refusals, plans, approvals, repair steps and alerts (newest first)',
  access: 'check',
  run: async (ctx, args) => {
    const [target] = args;
    if (args.length > 1 || target === 'all') return { text: USAGE, visibility: 'ephemeral', usage: true };
    if (target !== undefined && !targetNames(ctx.config, target).length) {
      return { text: `/maas audit: ${unknownTargetText(ctx.config, target)}`, visibility: 'ephemeral' };
    }
    if (!ctx.audit) return { text: '/maas audit: the audit trail is not available in this process (no Redis). Ask whoever runs the bot.', visibility: 'ephemeral' };
    const entries = await ctx.audit.latest({ ...(target ? { target } : {}), limit: SHOWN });
    return { text: auditTextForSlack(entries, target), visibility: 'ephemeral' };
  },
};
