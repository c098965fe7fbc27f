import { describeError } from '../src/core/errors.ts';
import { resolveTargets, type TargetKind } from '../src/core/targets.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { mention } from '../src/core/mention.ts';

/**
 * A repair command: validate the one target against the config, queue the plan phase, ack.
 * The worker posts the plan with Approve / Reject; nothing changes before an approver clicks.
 */
export function fixCommand(spec: { name: string; targetKind: TargetKind; summary: string; job?: string }): CommandDefinition {
  const job = spec.job ?? spec.name;
  const usage = `${spec.name} <${spec.targetKind}>`;
  return {
    name: spec.name,
    usage,
    summary: spec.summary,
    run: async (ctx, args) => {
      const target = args[0];
      if (!target || args.length > 1 || target === 'all') {
        return { text: `Usage: /maas ${usage} (one ${spec.targetKind}: a repair is planned and approved per ${spec.targetKind})`, visibility: 'ephemeral', usage: true };
      }
      try {
        resolveTargets(ctx.config, spec.targetKind, target);
      } catch (err) {
        return { text: `/maas ${spec.name}: ${describeError(err)}`, visibility: 'ephemeral' };
      }
      const origin = { channel: ctx.channel, user: ctx.user };
      await ctx.enqueue(job, { target, requestedBy: ctx.user, origin, ...(ctx.batch ? { batch: ctx.batch } : {}) });
      const approval = ctx.config.slack.approvers.length
        ? 'nothing changes until an approver clicks Approve'
        : 'no approvers are configured (slack.approvers), so it can be read but not run from Slack';
      return { text: `${mention(ctx.user)} asked for \`${spec.name} ${target}\`: measuring now; the plan will be posted here, and ${approval}.`, visibility: 'in_channel' };
    },
  };
}
