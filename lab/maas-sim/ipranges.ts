/** ipranges/ as canonical/maas serves it (api/ipranges.py, forms/iprange.py, models/iprange.py). */
import { configureDhcp, type SimIpRange } from './dhcp.ts';
import { API_PATH, subnetJson } from './render.ts';
import { lastValue, notFound, ok, text, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

function rangeJson(ctx: SimContext, r: SimIpRange): Record<string, unknown> {
  const subnet = ctx.state.subnets.find((s) => s.id === r.subnet);
  return {
    id: r.id,
    type: r.type,
    start_ip: r.start_ip,
    end_ip: r.end_ip,
    comment: r.comment,
    user: { username: r.user },
    subnet: subnet ? subnetJson(subnet) : r.subnet,
    resource_uri: `${API_PATH}ipranges/${r.id}/`,
  };
}

export function listIpRanges(ctx: SimContext): SimResponse {
  return ok([...(ctx.state.ipranges ?? [])].sort((a, b) => a.id - b.id).map((r) => rangeJson(ctx, r)));
}

export function getIpRange(ctx: SimContext, id: string): SimResponse {
  const r = ctx.state.ipranges?.find((x) => String(x.id) === id);
  return r ? ok(rangeJson(ctx, r)) : notFound('IPRange');
}

/**
 * PUT. Omitted fields keep their value (APIEditMixin). Only an admin or the range's owner may
 * (raise_error_if_not_owner). IPRange.save starts configure-dhcp whenever the subnet's VLAN has
 * DHCP on, changed or not (models/iprange.py, MAAS 3.7): the racks rewrite their dhcpd.conf.
 */
export function updateIpRange(ctx: SimContext, req: SimRequest, id: string): SimResponse {
  const r = ctx.state.ipranges?.find((x) => String(x.id) === id);
  if (!r) return notFound('IPRange');
  if (!ctx.caller.isAdmin && r.user !== ctx.caller.username) return text(403, "Unable to modify IP range. You don't own the IP range.");
  const comment = lastValue(req.form, 'comment');
  if (comment !== undefined) r.comment = comment;
  const start = lastValue(req.form, 'start_ip');
  if (start) r.start_ip = start;
  const end = lastValue(req.form, 'end_ip');
  if (end) r.end_ip = end;
  const subnet = ctx.state.subnets.find((s) => s.id === r.subnet);
  if (subnet?.vlan.dhcp_on) configureDhcp(ctx.state, subnet.id);
  return ok(rangeJson(ctx, r));
}
