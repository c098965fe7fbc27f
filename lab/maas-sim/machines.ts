/**
 * machines/ as canonical/maas serves it: api/nodes.py (read, power_parameters),
 * node_constraint_filter_forms.py (ReadNodesForm filters), api/machines.py and
 * models/node.py (mark_broken, mark_fixed), models/signals/nodes.py (previous_status, owner).
 */
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import { machineJson } from './render.ts';
import { nodeEvent } from './events.ts';
import { MAC_FIELD_RE, normaliseMac, type SimMachine, type SimRackController } from './scenario.ts';
import { knownPools, knownTags, knownZones } from './scenario-lookups.ts';
import { adminOnly, conflict, forbidden, invalid, isAdmin, notFound, ok, text, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

export function listMachines(ctx: SimContext, req: SimRequest): SimResponse {
  const q = req.query;
  const macs = q.getAll('mac_address');
  if (macs.some((mac) => !MAC_FIELD_RE.test(mac))) {
    return invalid({ mac_address: ['Invalid parameter: invalid MAC address format'] });
  }
  const zones = q.getAll('zone');
  const pools = q.getAll('pool');
  // Old clients pass tags comma- or space-separated (parse_legacy_tags).
  const tags = q.getAll('tags').flatMap((t) => t.match(/[^\s,]+/g) ?? []);
  const errors: Record<string, string[]> = {};
  const unknownZones = zones.filter((z) => !knownZones(ctx.state).includes(z));
  if (unknownZones.length) errors.zone = [`No such zone(s): ${unknownZones.join(', ')}.`];
  const unknownPools = pools.filter((p) => !knownPools(ctx.state).includes(p));
  if (unknownPools.length) errors.pool = [`No such pool(s): ${unknownPools.join(', ')}.`];
  const unknownTags = [...new Set(tags)].filter((t) => !knownTags(ctx.state).includes(t));
  if (unknownTags.length) errors.tags = [`No such tag(s): ${unknownTags.map((t) => `'${t}'`).join(', ')}.`];
  if (Object.keys(errors).length) return invalid(errors);

  const anyOf = (wanted: string[], value: string) => wanted.length === 0 || wanted.includes(value);
  const wantedMacs = macs.map(normaliseMac);
  const machines = ctx.state.machines
    .filter((m) => anyOf(q.getAll('id'), m.system_id))
    .filter((m) => anyOf(q.getAll('hostname'), m.hostname))
    .filter((m) => anyOf(q.getAll('domain'), m.domain))
    .filter((m) => anyOf(zones, m.zone))
    .filter((m) => anyOf(pools, m.pool))
    .filter((m) => anyOf(q.getAll('owner'), m.owner ?? ''))
    .filter((m) => anyOf(q.getAll('power_state'), m.power_state))
    // tags match all (NODE_FILTERS "tags": _match_all)
    .filter((m) => tags.every((t) => m.tag_names.includes(t)))
    .filter((m) => wantedMacs.length === 0 || m.interfaces.some((i) => wantedMacs.includes(i.mac_address.toLowerCase())))
    // NodePermission.view (auth/local.py): a non-admin sees unowned machines and its own (row machines-operator-all).
    .filter((m) => isAdmin(ctx) || m.owner === null || m.owner === ctx.caller.username)
    .sort((a, b) => a.id - b.id);
  return ok(machines.map((m) => machineJson(ctx.state, m)));
}

/** Every machine (or those asked for), virsh or not: `{system_id: power parameters}`. */
export function powerParameters(ctx: SimContext, req: SimRequest): SimResponse {
  // api/nodes.py PowersMixin.power_parameters: @admin_method (3.7 and before; later @check_permission(CAN_EDIT_MACHINES)).
  if (!isAdmin(ctx)) return adminOnly();
  const ids = req.query.getAll('id');
  const out: Record<string, unknown> = {};
  for (const m of [...ctx.state.machines].sort((a, b) => a.id - b.id)) {
    if (ids.length === 0 || ids.includes(m.system_id)) out[m.system_id] = m.power_parameters;
  }
  return ok(out);
}

/** GET machines/<id>/?op=power_parameters: NodePermission.admin, a bare 403 otherwise (rows power_parameters-one). */
export function machinePowerParameters(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Machine');
  return isAdmin(ctx) ? ok(m.power_parameters) : forbidden();
}

export function findMachine(ctx: SimContext, systemId: string): SimMachine | undefined {
  return ctx.state.machines.find((m) => m.system_id === systemId);
}

export function getMachine(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  return m ? ok(machineJson(ctx.state, m)) : notFound('Machine');
}

/** models/node.py RELEASABLE_STATUSES: mark_broken releases these first (and so powers them off). */
const RELEASABLE: ReadonlySet<number> = new Set([
  NODE_STATUS.ALLOCATED,
  NODE_STATUS.RESERVED,
  NODE_STATUS.BROKEN,
  NODE_STATUS.DEPLOYING,
  NODE_STATUS.DEPLOYED,
  NODE_STATUS.FAILED_DEPLOYMENT,
  NODE_STATUS.FAILED_DISK_ERASING,
  NODE_STATUS.FAILED_RELEASING,
]);

/** signals/nodes.py pre_save_update_status: leaving these does not update previous_status. */
const KEEPS_PREVIOUS_STATUS: ReadonlySet<number> = new Set([
  NODE_STATUS.RESCUE_MODE,
  NODE_STATUS.ENTERING_RESCUE_MODE,
  NODE_STATUS.FAILED_ENTERING_RESCUE_MODE,
  NODE_STATUS.EXITING_RESCUE_MODE,
  NODE_STATUS.FAILED_EXITING_RESCUE_MODE,
  NODE_STATUS.TESTING,
]);

/**
 * POST machines/<id>/?op=mark_broken. Only the machine's owner may (else 403). Allowed from every
 * status, Broken included. A releasable machine (Deployed, Allocated, Deploying, ...) is released
 * first: powered off, its OS fields cleared; previous_status keeps the status it had, so that
 * mark_fixed can put a Deployed machine back to Deployed (powered off).
 */
export function markBroken(ctx: SimContext, req: SimRequest, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Machine');
  // api/machines.py mark_broken: get_node_or_404(NodePermission.edit) refuses a locked node, then `node.owner_id != request.user.id` → 403.
  if (m.locked || m.owner !== ctx.caller.username) return forbidden();
  const before = m.status;
  const comment = req.form.get('comment') || req.form.get('error_description') || '';
  // models/node.py mark_broken logs "User marking node broken" (DEBUG) with "(user) - comment".
  logEvent(ctx, m, 'User marking node broken', 'DEBUG', comment ? `(${ctx.caller.username}) - ${comment}` : `(${ctx.caller.username})`);
  if (RELEASABLE.has(before) && m.power_state === 'on' && !anyRackConnected(ctx)) {
    // _release powers it off through a rack (models/node.py 5623; middleware.py maps NoConnectionsAvailable to 503).
    // Allocated: the release fails after the status change, a 500 that leaves it Broken (rows mark_broken-owner-poweredon[…]).
    if (before !== NODE_STATUS.ALLOCATED) return text(503, `No rack controllers can access the BMC of node ${m.hostname}`);
    breakMachine(m, before, comment);
    return text(500, "'NoneType' object has no attribute 'username'");
  }
  if (RELEASABLE.has(before)) {
    m.power_state = 'off';
    m.osystem = '';
    m.distro_series = '';
    m.status_message = 'Released';
  }
  breakMachine(m, before, comment);
  return ok(machineJson(ctx.state, m));
}

/** models/node.py mark_broken: Broken, the comment as error_description, and no owner (rows mark_broken-owner, get-machine). */
function breakMachine(m: SimMachine, before: number, comment: string): void {
  if (!KEEPS_PREVIOUS_STATUS.has(before)) m.previous_status = before;
  m.status = NODE_STATUS.BROKEN;
  m.error_description = comment;
  m.owner = null;
}

/** Whether MAAS can reach any rack over RPC (a scenario that names no rack has a healthy one: scenario.ts). */
function anyRackConnected(ctx: SimContext): boolean {
  return connectedRacks(ctx).length > 0;
}

function connectedRacks(ctx: SimContext): SimRackController[] {
  return ctx.state.rackControllers.filter((r) => r.connected !== false);
}

/**
 * models/node.py start(): a commissioning needs the commissioning release among the boot images
 * every connected rack holds (clusterrpc/boot_images.py get_common_available_boot_images); else
 * ValidationError "Ephemeral operating system <os> <release> is unavailable." (rows commission-from-*).
 */
export function commissioningImageMissing(ctx: SimContext): string | undefined {
  const { osystem, release } = commissioningRelease(ctx);
  const connected = connectedRacks(ctx);
  const everywhere = connected.length > 0 && connected.every((r) => (r.bootImages ?? []).some((i) => i.name === `${osystem}/${release}`));
  return everywhere ? undefined : `Ephemeral operating system ${osystem} ${release} is unavailable.`;
}

/** Config commissioning_osystem / commissioning_distro_series (api/maas.py get_config). */
export function commissioningRelease(ctx: SimContext): { osystem: string; release: string } {
  return ctx.state.commissioning ?? { osystem: 'ubuntu', release: 'jammy' };
}

function logEvent(ctx: SimContext, m: SimMachine, type: string, level: string, description: string): void {
  const events = (ctx.state.events ??= []);
  const id = Math.max(0, ...events.map((e) => e.id)) + 1;
  events.push(nodeEvent({ id, node: m, username: ctx.caller.username, level, created: new Date(ctx.now()), type, description }));
}

/** POST machines/<id>/?op=mark_fixed: Broken only; back to Deployed if it was Deployed, else Ready (ownerless). */
export function markFixed(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Machine');
  // api/machines.py mark_fixed: NodePermission.admin (auth/local.py: superusers, and never on a locked node).
  if (!isAdmin(ctx) || m.locked) return forbidden();
  if (m.status !== NODE_STATUS.BROKEN) return conflict("Can't mark a non-broken node as 'Ready'.");
  const next = m.previous_status === NODE_STATUS.DEPLOYED ? NODE_STATUS.DEPLOYED : NODE_STATUS.READY;
  m.previous_status = m.status;
  m.status = next;
  m.error_description = '';
  m.osystem = '';
  m.distro_series = '';
  if (next === NODE_STATUS.READY) m.owner = null;
  return ok(machineJson(ctx.state, m));
}

/** node_action.py Commission.actionable_statuses: the states `commission` starts from (CommissionForm checks them). */
export const COMMISSIONABLE: ReadonlySet<number> = new Set([NODE_STATUS.NEW, NODE_STATUS.FAILED_COMMISSIONING, NODE_STATUS.READY, NODE_STATUS.BROKEN]);

/**
 * POST machines/<id>/?op=commission: admin only and not locked (403); from New, Failed commissioning,
 * Ready or Broken only (400, CommissionForm). models/node.py start_commissioning: status Commissioning,
 * owner = the user who started it. It PXE-boots: only a MAC MAAS knows gets the commissioning environment.
 */
export function commission(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Machine');
  if (!isAdmin(ctx) || m.locked) return forbidden();
  if (!COMMISSIONABLE.has(m.status)) return invalid({ __all__: ['Commission is not available because of the current state of the node.'] });
  const missing = commissioningImageMissing(ctx);
  if (missing) return text(400, missing);
  m.previous_status = m.status;
  m.status = NODE_STATUS.COMMISSIONING;
  m.owner = ctx.caller.username;
  m.error_description = '';
  m.commissioning = { startedAt: ctx.now(), bootMacKnown: bootMacKnown(m) };
  return ok(machineJson(ctx.state, m));
}

/** MAAS answers the PXE request of a MAC it records on the machine; any other MAC is an unknown node (it enlists). */
function bootMacKnown(m: SimMachine): boolean {
  const boot = m.interfaces.find((i) => i.id === m.boot_interface_id);
  const live = m.live_boot_mac ?? boot?.mac_address;
  return live !== undefined && m.interfaces.some((i) => i.type === 'physical' && i.mac_address === live);
}

/**
 * Moves commissioning machines on by the simulator's clock: Ready once commissioning has run
 * (owner cleared: signals/nodes.py clear_owner_when_status_changes_to_new_or_ready), or Failed
 * commissioning once node_timeout passed without hearing from the node (status_monitor.py).
 */
export function advanceCommissioning(ctx: SimContext): void {
  const now = ctx.now();
  for (const m of ctx.state.machines) {
    const run = m.commissioning;
    if (!run || m.status !== NODE_STATUS.COMMISSIONING) continue;
    const elapsed = now - run.startedAt;
    if (run.bootMacKnown && elapsed >= ctx.timing.commissioningMs) {
      finishCommissioning(m, NODE_STATUS.READY, '');
    } else if (!run.bootMacKnown && ctx.timing.statusMonitor && elapsed >= ctx.timing.nodeTimeoutMinutes * 60_000) {
      finishCommissioning(m, NODE_STATUS.FAILED_COMMISSIONING, `Node operation 'Commissioning' timed out after ${ctx.timing.nodeTimeoutMinutes} minutes.`);
      m.power_state = 'off';
    }
  }
}

function finishCommissioning(m: SimMachine, status: number, error: string): void {
  m.previous_status = m.status;
  m.status = status;
  m.error_description = error;
  // The status event MAAS logs (models/node.py status_message: "type - description").
  m.status_message = status === NODE_STATUS.READY ? 'Ready' : `Failed commissioning - ${error}`;
  m.commissioning = null;
  if (status === NODE_STATUS.READY) m.owner = null;
}

/**
 * POST ?op=lock / ?op=unlock (api/machines.py): NodePermission.lock, which a lock does not block
 * (auth/local.py _can_edit: an admin, the owner, or anyone when there is no owner). NodeStateViolation
 * (409) when already so; models/node.py lock: Deployed or Deploying only.
 */
export function setLocked(ctx: SimContext, systemId: string, locked: boolean): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Machine');
  if (!isAdmin(ctx) && m.owner !== null && m.owner !== ctx.caller.username) return forbidden();
  if (m.locked === locked) return conflict(locked ? 'Machine is already locked' : 'Machine is not locked');
  if (locked && m.status !== NODE_STATUS.DEPLOYED && m.status !== NODE_STATUS.DEPLOYING) {
    return conflict("Can't lock, node is not deployed or deploying");
  }
  m.locked = locked;
  return ok(machineJson(ctx.state, m));
}
