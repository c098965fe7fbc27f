/** MAAS node status codes and names (canonical/maas src/maasserver/enum.py NODE_STATUS). */
export const NODE_STATUS = {
  NEW: 0,
  COMMISSIONING: 1,
  FAILED_COMMISSIONING: 2,
  MISSING: 3,
  READY: 4,
  RESERVED: 5,
  DEPLOYED: 6,
  RETIRED: 7,
  BROKEN: 8,
  DEPLOYING: 9,
  ALLOCATED: 10,
  FAILED_DEPLOYMENT: 11,
  RELEASING: 12,
  FAILED_RELEASING: 13,
  DISK_ERASING: 14,
  FAILED_DISK_ERASING: 15,
  RESCUE_MODE: 16,
  ENTERING_RESCUE_MODE: 17,
  FAILED_ENTERING_RESCUE_MODE: 18,
  EXITING_RESCUE_MODE: 19,
  FAILED_EXITING_RESCUE_MODE: 20,
  TESTING: 21,
  FAILED_TESTING: 22,
} as const;

export type NodeStatusCode = (typeof NODE_STATUS)[keyof typeof NODE_STATUS];

const STATUS_NAMES: readonly string[] = [
  'New',
  'Commissioning',
  'Failed commissioning',
  'Missing',
  'Ready',
  'Reserved',
  'Deployed',
  'Retired',
  'Broken',
  'Deploying',
  'Allocated',
  'Failed deployment',
  'Releasing',
  'Releasing failed',
  'Disk erasing',
  'Failed disk erasing',
  'Rescue mode',
  'Entering rescue mode',
  'Failed to enter rescue mode',
  'Exiting rescue mode',
  'Failed to exit rescue mode',
  'Testing',
  'Failed testing',
];

/** The `status_name` MAAS shows for a status code. */
export function statusName(code: number): string {
  return STATUS_NAMES[code] ?? `Unknown (${code})`;
}

/** The code for a status name as MAAS prints it (case-insensitive), or undefined. */
export function statusCode(name: string): number | undefined {
  const index = STATUS_NAMES.findIndex((n) => n.toLowerCase() === name.trim().toLowerCase());
  return index === -1 ? undefined : index;
}
