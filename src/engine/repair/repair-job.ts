import { UsageError } from '../../core/errors.ts';
import type { JobDefinition } from '../job-types.ts';
import { resolveTargets } from '../../core/targets.ts';
import { executeApproved } from './execute-approved.ts';
import { parseExecuteJobData } from './execute-job-data.ts';
import { planAndPost } from './plan-and-post.ts';
import { REPAIR_LOCK, type RepairSpec } from './repair-spec.ts';
import { runInTerminal } from './run-in-terminal.ts';

/**
 * The job of one repair kind (`/maas fix-… <target>`, `maas-chatops fix-… <target> [--apply]`):
 * from a terminal (`interactive`) it plans and, with --apply, executes; from Slack it plans and
 * posts the plan for approval. The approved run is the execute job's (execute-job.ts).
 */
export function repairJob(spec: RepairSpec): JobDefinition {
  const own = new Map([[spec.kind, spec]]);
  return {
    name: spec.kind,
    lock: REPAIR_LOCK,
    async run(ctx, data) {
      if (data.target === 'all') {
        throw new UsageError(`${spec.kind} takes one ${spec.targetKind}, not all`, `A repair is planned and approved per ${spec.targetKind}: run ${spec.kind} <${spec.targetKind}>`);
      }
      resolveTargets(ctx.config, spec.targetKind, data.target);
      if (data.phase === 'execute') {
        // Queued on approval by a version before the execute queue (docs/operations.md, upgrading): run as the execute job would.
        return [await executeApproved(ctx, parseExecuteJobData({ planId: data.planId, approvedBy: data.approvedBy }), own)];
      }
      return [data.interactive === true ? await runInTerminal(ctx, data, spec) : await planAndPost(ctx, data, spec)];
    },
  };
}
