import { NODE_STATUS } from '../../adapters/maas/node-status.ts';

/**
 * How fix-macs treats each MAAS state (canonical/maas api/interfaces.py
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
 * Failed states MAAS lets us take through mark_broken → PUT → commission without harm: the machine
 * ends Ready only when MAAS commissions it, never by mark_fixed (which would make it Ready, and
 * allocatable, without a successful commissioning: node_action.py MarkFixed refuses exactly that in
 * the UI). Commission starts from Broken (node_action.py Commission.actionable_statuses). Failed
 * deployment, Failed releasing and Failed disk erasing are in MAAS's RELEASABLE_STATUSES:
 * mark_broken would release them and power them off (models/node.py mark_broken → _release).
 */
export const VIA_BROKEN: ReadonlySet<number> = new Set([NODE_STATUS.FAILED_COMMISSIONING]);

/**
 * A failed rescue keeps previous_status Deployed (models/signals/nodes.py skips rescue states), so
 * mark_fixed would restore Deployed, while clearing the recorded OS (models/node.py mark_fixed);
 * exit_rescue_mode is MAAS's way back (node_action.py ExitRescueMode). Refused with that advice.
 */
export const RESCUE_FAILED: ReadonlySet<number> = new Set([NODE_STATUS.FAILED_ENTERING_RESCUE_MODE, NODE_STATUS.FAILED_EXITING_RESCUE_MODE]);

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
