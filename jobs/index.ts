import type { JobDefinition } from './types.ts';

/** Every job processor by name (DESIGN.md principle 8). Later work adds one line each. */
export const jobRegistry = new Map<string, JobDefinition>();

export function registerJob(job: JobDefinition): void {
  if (jobRegistry.has(job.name)) throw new Error(`job ${job.name} registered twice`);
  jobRegistry.set(job.name, job);
}

export function findJob(name: string): JobDefinition | undefined {
  return jobRegistry.get(name);
}
