/** One BullMQ queue per job kind, so a long mac-diff never holds up a dns-check. */
export function queueNameFor(jobName: string): string {
  return `maas-${jobName}`;
}

export const DEFAULT_PREFIX = 'maas-chatops';
