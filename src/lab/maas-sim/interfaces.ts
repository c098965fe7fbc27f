/**
 * nodes/<system_id>/interfaces/ as canonical/maas serves it (api/interfaces.py, forms/interface.py,
 * models/interface.py PhysicalInterface.clean for the MAC uniqueness message).
 */
import { NODE_STATUS } from '../../maas/node-status.ts';
import { findMachine } from './machines.ts';
import { interfaceJson } from './render.ts';
import { MAC_FIELD_RE, normaliseMac } from './scenario.ts';
import { everyInterface } from './scenario-lookups.ts';
import { conflict, forbidden, invalid, lastValue, notFound, ok, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

/** api/interfaces.py ALLOWED_STATES plus the Deployed extra state of `update`. */
const EDITABLE: ReadonlySet<number> = new Set([
  NODE_STATUS.NEW,
  NODE_STATUS.READY,
  NODE_STATUS.FAILED_TESTING,
  NODE_STATUS.ALLOCATED,
  NODE_STATUS.BROKEN,
  NODE_STATUS.DEPLOYED,
]);

export const INTERFACE_STATE_CONFLICT = 'Cannot update interface interface because the machine is not New, Ready, Allocated, or Broken.';

export function listInterfaces(ctx: SimContext, systemId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  if (!m) return notFound('Node');
  return ok(m.interfaces.map((i) => interfaceJson(m.system_id, i)));
}

export function getInterface(ctx: SimContext, systemId: string, interfaceId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  const i = m?.interfaces.find((x) => String(x.id) === interfaceId);
  return m && i ? ok(interfaceJson(m.system_id, i)) : notFound('Interface');
}

/** PUT: state rule (409), MAC format and uniqueness (400); a Deployed machine takes only name and mac_address. */
export function updateInterface(ctx: SimContext, req: SimRequest, systemId: string, interfaceId: string): SimResponse {
  const m = findMachine(ctx, systemId);
  const target = m?.interfaces.find((x) => String(x.id) === interfaceId);
  if (!m || !target) return notFound('Interface');
  // api/interfaces.py update: NodePermission.admin on the node.
  if (ctx.state.userIsAdmin === false) return forbidden();
  if (!EDITABLE.has(m.status)) return conflict(INTERFACE_STATE_CONFLICT);

  const rawMac = lastValue(req.form, 'mac_address');
  let mac = target.mac_address;
  if (rawMac !== undefined) {
    if (!MAC_FIELD_RE.test(rawMac)) return invalid({ mac_address: [`'${rawMac}' is not a valid MAC address.`] });
    mac = normaliseMac(rawMac);
    const holder = everyInterface(ctx.state).find((o) => o.iface !== target && o.iface.type === 'physical' && o.iface.mac_address === mac);
    if (holder) {
      return invalid({ mac_address: [`This MAC address is already in use by ${holder.iface.name} (${holder.iface.type}) on ${holder.hostname}.`] });
    }
  }
  const name = lastValue(req.form, 'name');
  target.mac_address = mac;
  if (name) target.name = name;
  return ok(interfaceJson(m.system_id, target));
}
