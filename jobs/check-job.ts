import { runCheck, type RunnableCheck } from '../src/features/run-check.ts';
import type { JobContext, JobData } from '../src/engine/job-types.ts';
import type { JobDefinition } from '../src/engine/job-types.ts';
import type { Report } from '../src/core/report.ts';

/** A check's job: `<check> <target>|all`, one report per target (src/features/run-check.ts). */
export function checkJob(spec: RunnableCheck): JobDefinition {
  return {
    name: spec.name,
    run: async (ctx, data) => {
      const reports = await runCheck(ctx, spec, data.target);
      await recordVerdicts(ctx, data, reports);
      return reports;
    },
  };
}

/** A check someone asked for goes to the audit trail with its verdict: the incident's timeline shows what was known when. */
async function recordVerdicts(ctx: JobContext, data: JobData, reports: readonly Report[]): Promise<void> {
  if (!ctx.audit) return;
  const actor = typeof data.requestedBy === 'string' && data.requestedBy ? data.requestedBy : 'unknown';
  for (const r of reports) {
    await ctx.audit.record({ kind: 'check', actor, ...(data.reply?.channel ? { channel: data.reply.channel } : {}), action: r.kind, target: r.target, outcome: r.status, detail: r.verdict });
  }
}
