/**
 * nodes/<system_id>/interfaces/ as canonical/maas serves it (api/interfaces.py, forms/interface.py,
 * models/interface.py PhysicalInterface.clean for the MAC uniqueness message).
 */
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import { findMachine } from './machines.ts';
import { interfaceJson } from './render.ts';
import { MAC_FIELD_RE, normaliseMac } from './scenario.ts';
import { everyInterface } from './scenario-lookups.ts';
import { versionAtLeast } from '../../src/adapters/maas/maas-version.ts';
import type { SimInterface, SimMachine } from './scenario.ts';
import { DEFAULT_SIM_VERSION, conflict, forbidden, invalid, isAdmin, lastValue, notFound, ok, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

/** api/interfaces.py ALLOWED_STATES plus the Deployed extra state of `update`; NEW joined ALLOWED_STATES in 3.3 (LP #1990383). */
const EDITABLE: ReadonlySet<number> = new Set([
  NODE_STATUS.READY,
  NODE_STATUS.FAILED_TESTING,
  NODE_STATUS.ALLOCATED,
  NODE_STATUS.BROKEN,
  NODE_STATUS.DEPLOYED,
]);

export const INTERFACE_STATE_CONFLICT = 'Cannot update interface interface because the machine is not New, Ready, Allocated, or Broken.';
/** The same refusal before 3.3, when New was not allowed. */
export const INTERFACE_STATE_CONFLICT_BEFORE_3_3 = 'Cannot update interface interface because the machine is not Ready, Allocated, or Broken.';

const COLON_MAC_RE = /^(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$/;

function editable(ctx: SimContext, status: number): boolean {
  return EDITABLE.has(status) || (status === NODE_STATUS.NEW && versionAtLeast(simVersion(ctx), 3, 3));
}

export function simVersion(ctx: SimContext): string {
  return ctx.state.version ?? DEFAULT_SIM_VERSION;
}

export function listInterfaces(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Node');
  return ok(m.interfaces.map((i) => interfaceJson(m.system_id, i, m.interfaces)));
}

export function getInterface(ctx: SimContext, systemId: string, interfaceId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  const i = m?.interfaces.find((x) => String(x.id) === interfaceId);
  return m && i ? ok(interfaceJson(m.system_id, i, m.interfaces)) : notFound('Interface');
}

/** PUT: state rule (409), MAC format and uniqueness (400); a Deployed machine takes only name and mac_address. */
export function updateInterface(ctx: SimContext, req: SimRequest, systemId: string, interfaceId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  const target = m?.interfaces.find((x) => String(x.id) === interfaceId);
  if (!m || !target) return notFound('Interface');
  // api/interfaces.py update: get_interface_or_404(NodePermission.admin) on the interface and its node;
  // auth/local.py: only an admin may edit a machine's interfaces, and NodePermission.admin is never granted on a locked node.
  if (!isAdmin(ctx) || m.locked) return forbidden();
  if (!editable(ctx, m.status)) {
    return conflict(versionAtLeast(simVersion(ctx), 3, 3) ? INTERFACE_STATE_CONFLICT : INTERFACE_STATE_CONFLICT_BEFORE_3_3);
  }

  const rawMac = lastValue(req.form, 'mac_address');
  let mac = target.mac_address;
  if (rawMac !== undefined) {
    const before35 = !versionAtLeast(simVersion(ctx), 3, 5);
    // 3.4 takes only the colon form and stores it as given, upper case kept (rows iface-mac-dashes, iface-mac-uppercase).
    if (!(before35 ? COLON_MAC_RE : MAC_FIELD_RE).test(rawMac)) return invalid({ mac_address: [`'${rawMac}' is not a valid MAC address.`] });
    mac = before35 ? rawMac : normaliseMac(rawMac);
    // models/interface.py: a bond or bridge may share a MAC with its own parents (_validate_unique_or_parent_mac).
    const related = relatedInterfaces(m, target);
    const holder = everyInterface(ctx.state).find((o) => o.iface !== target && !related.has(o.iface) && o.iface.type === 'physical' && o.iface.mac_address.toLowerCase() === mac.toLowerCase());
    if (holder) {
      return invalid({ mac_address: [`This MAC address is already in use by ${holder.iface.name} (${holder.iface.type}) on ${holder.hostname}.`] });
    }
  }
  const name = lastValue(req.form, 'name');
  const oldName = target.name;
  target.mac_address = mac;
  if (name) target.name = name;
  if (name && name !== oldName) for (const child of m.interfaces) child.parents = child.parents?.map((p) => (p === oldName ? name : p));
  copyMacToVlanChildren(m, target);
  return ok(interfaceJson(m.system_id, target, m.interfaces));
}

/** Parents and children of an interface on the same node. */
function relatedInterfaces(m: SimMachine, target: SimInterface): Set<SimInterface> {
  const parents = m.interfaces.filter((i) => target.parents?.includes(i.name));
  const children = m.interfaces.filter((i) => i.parents?.includes(target.name));
  return new Set([...parents, ...children]);
}

/**
 * signals/interfaces.py resave_children_interface_handler re-saves the children of a saved
 * interface, and VLANInterface.save copies its parent's MAC (models/interface.py). Bonds and
 * bridges keep their own MAC.
 */
function copyMacToVlanChildren(m: SimMachine, parent: SimInterface): void {
  for (const child of m.interfaces) {
    if (child.type === 'vlan' && child.parents?.[0] === parent.name) {
      child.mac_address = parent.mac_address;
      copyMacToVlanChildren(m, child);
    }
  }
}
