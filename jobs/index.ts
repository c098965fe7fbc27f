import type { JobDefinition } from '../src/job-types.ts';
import { resolverCheckJob } from './resolver-check.ts';
import { macDiffJob } from './mac-diff.ts';
import { dnsCheckJob } from './dns-check.ts';
import { fixMacsJob } from './fix-macs.ts';
import { fixDnsJob } from './fix-dns.ts';
import { fixResolverJob } from './fix-resolver.ts';

/** Every job processor by name. Later work adds one line each. */
export const jobRegistry = new Map<string, JobDefinition>();

export function registerJob(job: JobDefinition): void {
  if (jobRegistry.has(job.name)) throw new Error(`job ${job.name} registered twice`);
  jobRegistry.set(job.name, job);
}

registerJob(resolverCheckJob);
registerJob(macDiffJob);
registerJob(dnsCheckJob);
registerJob(fixMacsJob);
registerJob(fixDnsJob);
registerJob(fixResolverJob);

export function findJob(name: string): JobDefinition | undefined {
  return jobRegistry.get(name);
}
