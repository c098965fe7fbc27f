import { z } from 'zod';
import { ChatopsError } from '../../core/errors.ts';

/** The execute job's queue: one of its own, so a plan job and a run are told apart by where they are, not by a flag. */
export const REPAIR_EXECUTE_JOB = 'repair-execute';

/** Job data of an approved repair's run: which plan, approved by whom. Everything else is read from the plan. */
export type ExecuteJobData = { planId: string; approvedBy: string };

const executeJobDataSchema = z.strictObject({ planId: z.string().regex(/^[0-9a-f]{16}$/), approvedBy: z.string() });

export function parseExecuteJobData(data: unknown): ExecuteJobData {
  const parsed = executeJobDataSchema.safeParse(data);
  if (!parsed.success) throw new ChatopsError('GUARD_REFUSED', `a ${REPAIR_EXECUTE_JOB} job must carry a plan id and who approved it, nothing else; not run`);
  return parsed.data;
}

/**
 * The run of an approved repair has a job id of its own making: queued twice for one approval (a
 * retried enqueue, a redelivered click), BullMQ keeps one job. A plan approved again after its
 * approval was undone gets a new id, since its approval time differs.
 */
/** How the approval handler queues a run (JobQueues.enqueue on REPAIR_EXECUTE_JOB). */
export type QueueExecution = (jobName: string, data: ExecuteJobData, options: { jobId: string }) => Promise<string>;

export function executionJobId(planId: string, approvedAt: number | undefined): string {
  return `execute-${planId}-${approvedAt ?? 0}`;
}
