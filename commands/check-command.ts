import { describeError } from '../src/errors.ts';
import { resolveTargets, type TargetKind } from '../src/targets.ts';
import type { CommandDefinition } from './types.ts';

/** A diagnose command: validate the target against the config, queue the job, ack. */
export function checkCommand(spec: { name: string; targetKind: TargetKind; summary: string; job?: string }): CommandDefinition {
  const job = spec.job ?? spec.name;
  return {
    name: spec.name,
    usage: `${spec.name} <${spec.targetKind}>|all`,
    summary: spec.summary,
    run: async (ctx, args) => {
      const target = args[0];
      if (!target || args.length > 1) {
        return { text: `Usage: /maas ${spec.name} <${spec.targetKind}>|all`, visibility: 'ephemeral' };
      }
      try {
        resolveTargets(ctx.config, spec.targetKind, target);
      } catch (err) {
        return { text: `/maas ${spec.name}: ${describeError(err)}`, visibility: 'ephemeral' };
      }
      const reply = { channel: ctx.channel, user: ctx.user, ...(ctx.responseUrl ? { responseUrl: ctx.responseUrl } : {}) };
      await ctx.enqueue(job, { target, reply, requestedBy: ctx.user });
      return { text: `<@${ctx.user}> asked for \`${spec.name} ${target}\`: running, the result will be posted here.`, visibility: 'in_channel' };
    },
  };
}
