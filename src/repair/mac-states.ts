import { NODE_STATUS } from '../maas/node-status.ts';

/**
 * How fix-macs treats each MAAS state (FACTS.md section 2; canonical/maas api/interfaces.py
 * ALLOWED_STATES + Deployed for update, api/machines.py mark_broken/mark_fixed, models/node.py).
 */

/** `PUT nodes/<id>/interfaces/<id>/` is allowed as the machine stands. */
export const DIRECT_EDIT: ReadonlySet<number> = new Set([
  NODE_STATUS.NEW,
  NODE_STATUS.READY,
  NODE_STATUS.ALLOCATED,
  NODE_STATUS.BROKEN,
  NODE_STATUS.FAILED_TESTING,
  NODE_STATUS.DEPLOYED,
]);

/**
 * Failed states MAAS lets us take through mark_broken → PUT → mark_fixed without harm (the machine
 * ends Ready, to be commissioned again). Failed deployment, Failed releasing and Failed disk erasing
 * are in MAAS's RELEASABLE_STATUSES: mark_broken would release them and power them off
 * (models/node.py mark_broken → _release). A failed rescue is a deployed machine whose
 * previous_status is the rescue state, so mark_fixed would send it to Ready with its workload on
 * disk. Those are refused and left to a person.
 */
export const VIA_BROKEN: ReadonlySet<number> = new Set([NODE_STATUS.FAILED_COMMISSIONING]);

/** MAAS is working on these: any edit is a 409, and breaking them would interrupt the work. */
export const BUSY: ReadonlySet<number> = new Set([
  NODE_STATUS.COMMISSIONING,
  NODE_STATUS.DEPLOYING,
  NODE_STATUS.RELEASING,
  NODE_STATUS.DISK_ERASING,
  NODE_STATUS.RESCUE_MODE,
  NODE_STATUS.ENTERING_RESCUE_MODE,
  NODE_STATUS.EXITING_RESCUE_MODE,
  NODE_STATUS.TESTING,
]);

/** mark_broken releases these and powers them off (MAAS's RELEASABLE_STATUSES but Broken): never. */
export const NEVER_MARK_BROKEN: ReadonlySet<number> = new Set([
  NODE_STATUS.DEPLOYED,
  NODE_STATUS.ALLOCATED,
  NODE_STATUS.DEPLOYING,
  NODE_STATUS.RESERVED,
  NODE_STATUS.FAILED_DEPLOYMENT,
  NODE_STATUS.FAILED_RELEASING,
  NODE_STATUS.FAILED_DISK_ERASING,
]);
