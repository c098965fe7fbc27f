import type { JobDefinition } from '../job-types.ts';
import { executeApproved } from './execute-approved.ts';
import { parseExecuteJobData, REPAIR_EXECUTE_JOB, type ExecuteJobData } from './execute-job-data.ts';
import type { RepairKind } from './plan.ts';
import { REPAIR_LOCK, type RepairSpec } from './repair-spec.ts';

/** The execute job for these repairs, on its own queue: job data `{ planId, approvedBy }`, the rest read from the plan. */
export function repairExecuteJob(specs: readonly RepairSpec[]): JobDefinition<ExecuteJobData> {
  const byKind = new Map<RepairKind, RepairSpec>(specs.map((spec) => [spec.kind, spec]));
  return {
    name: REPAIR_EXECUTE_JOB,
    lock: REPAIR_LOCK,
    run: async (ctx, data) => [await executeApproved(ctx, parseExecuteJobData(data), byKind)],
    // A failure is told in the plan's thread, as "fix-macs site-b failed: …".
    async failureReply(ctx, data) {
      const stored = await ctx.plans?.get(data.planId);
      if (!stored) return undefined;
      return { label: `${stored.plan.kind} ${stored.plan.target}`, reply: { channel: stored.channel, ...(stored.messageTs ? { threadTs: stored.messageTs, errorsOnly: true } : {}) } };
    },
  };
}
