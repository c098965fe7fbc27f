import type { JobDefinition, QueuedData } from '../src/engine/job-types.ts';
import { CHECKS, FIX_NAMES, type FixName } from '../src/features/registry.ts';
import { checkJob } from './check-job.ts';
import { fixMacsJob } from './fix-macs.ts';
import { fixDnsJob } from './fix-dns.ts';
import { fixResolverJob } from './fix-resolver.ts';
import { executeRepairJob } from './repair-execute.ts';
import { timelineJob } from './timeline.ts';

/** Every job processor by name: one per registered check, one per repair it names (src/features/registry.ts). */
export const jobRegistry = new Map<string, JobDefinition>();

export function registerJob(job: JobDefinition): void {
  if (jobRegistry.has(job.name)) throw new Error(`job ${job.name} registered twice`);
  jobRegistry.set(job.name, job);
}

const repairJobs: Record<FixName, JobDefinition> = {
  'fix-dns': fixDnsJob,
  'fix-macs': fixMacsJob,
  'fix-resolver': fixResolverJob,
};

for (const spec of CHECKS) registerJob(checkJob(spec));
for (const name of FIX_NAMES) registerJob(repairJobs[name]);

/**
 * Every queue a worker serves: the jobs above, the run of an approved repair (queued by the Approve
 * button, never a command) and the timeline (it reads the audit trail, so it has no terminal job).
 */
export const workerJobs: ReadonlyMap<string, JobDefinition<QueuedData>> = new Map<string, JobDefinition<QueuedData>>([
  ...jobRegistry,
  [executeRepairJob.name, executeRepairJob],
  [timelineJob.name, timelineJob as JobDefinition<QueuedData>],
]);

export function findJob(name: string): JobDefinition | undefined {
  return jobRegistry.get(name);
}
