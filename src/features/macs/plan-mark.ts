/**
 * The comment fix-macs gives mark_broken, and how a later run recognises a machine a plan left
 * Broken. MAAS keeps the comment as the machine's error_description (shown in machine JSON from
 * 3.5) and logs it as the description of the DEBUG event "User marking node broken", as
 * "(<user>) - <comment>" (canonical/maas 3.4 models/node.py mark_broken → _register_request_event;
 * provisioningserver/events.py REQUEST_NODE_MARK_BROKEN). On 3.4 the event is the only place.
 */

/** What fix-macs sends as mark_broken's comment. */
export function planMarkComment(planId: string): string {
  return `maas-chatops plan ${planId}: to update the boot MAC; commissioning follows`;
}

/** The event type's description (the `type` field of `events/?op=query`) of a user's mark_broken. */
export const USER_MARK_BROKEN_EVENT = 'User marking node broken';
/** A mark_broken MAAS made itself (failed tests, …): never a plan's. */
export const SYSTEM_MARK_BROKEN_EVENT = 'Marking node broken';

const IN_COMMENT = /^maas-chatops plan ([0-9a-z]+): /;
const IN_EVENT = /^\(([^)]*)\) - maas-chatops plan ([0-9a-z]+): /;

/** The plan id in an error_description, or undefined when another hand wrote it. */
export function planIdInComment(comment: string): string | undefined {
  return IN_COMMENT.exec(comment)?.[1];
}

/** The plan id and the MAAS user in a "User marking node broken" event's description. */
export function planMarkInEvent(description: string): { planId: string; user: string } | undefined {
  const m = IN_EVENT.exec(description);
  return m ? { user: m[1] ?? '', planId: m[2] ?? '' } : undefined;
}
