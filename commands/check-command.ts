import { describeError } from '../src/core/errors.ts';
import { resolveTargets, type TargetKind } from '../src/core/targets.ts';
import type { JoinedCheck } from '../src/engine/queue/dedup.ts';
import type { CommandDefinition } from '../src/edge/command-types.ts';
import { mention } from '../src/core/mention.ts';

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
        return { text: `Usage: /maas ${spec.name} <${spec.targetKind}>|all`, visibility: 'ephemeral', usage: true };
      }
      try {
        resolveTargets(ctx.config, spec.targetKind, target);
      } catch (err) {
        return { text: `/maas ${spec.name}: ${describeError(err)}`, visibility: 'ephemeral' };
      }
      // The result replaces the "running" answer posted through the response_url (one message per command).
      const reply = { channel: ctx.channel, user: ctx.user, ...(ctx.responseUrl ? { responseUrl: ctx.responseUrl, replaceRunning: true, askedAt: Date.now() } : {}) };
      const data = { target, reply, requestedBy: ctx.user };
      const joined = ctx.submit ? (await ctx.submit(job, data)).joined : (await ctx.enqueue(job, data), undefined);
      const asked = `${mention(ctx.user)} asked for \`${spec.name} ${target}\``;
      const replacedByResult = Boolean(ctx.responseUrl);
      if (joined) return { text: `${asked}: ${joinedText(joined)}`, visibility: 'in_channel', replacedByResult };
      return { text: `${asked}: running, the result will be posted here.`, visibility: 'in_channel', replacedByResult };
    },
  };
}

/** The ack of a request that joined an identical check: whose, and whether it started before this request. */
export function joinedText(joined: JoinedCheck, now = Date.now()): string {
  const by = joined.openedBy ? ` ${mention(joined.openedBy)}` : '';
  if (joined.startedAt === undefined) {
    return `joined the same check${by} asked for ${ago(joined.openedAt, now)}, still queued; its result will be posted here.`;
  }
  return `joined the same check${by} asked for ${ago(joined.openedAt, now)}, running since ${ago(joined.startedAt, now)}; its result will be posted here. It started before your request: run it again after that result if something changed since.`;
}

function ago(at: number, now: number): string {
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 1 ? 'just now' : s < 120 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}
