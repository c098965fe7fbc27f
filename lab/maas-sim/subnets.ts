/** subnets/ as canonical/maas serves it (api/subnets.py, forms/subnet.py, fields.py IPListFormField). */
import { isIP } from 'node:net';
import { dhcpFieldsChanged, rewriteAfterTrigger, subnetEditRewritesDhcp } from './dhcp.ts';
import { simVersion } from './interfaces.ts';
import { versionAtLeast } from '../../src/adapters/maas/maas-version.ts';
import { subnetJson } from './render.ts';
import { forbidden, invalid, isAdmin, lastValue, notFound, ok, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

export function listSubnets(ctx: SimContext): SimResponse {
  return ok([...ctx.state.subnets].sort((a, b) => a.id - b.id).map(subnetJson));
}

export function getSubnet(ctx: SimContext, id: string): SimResponse {
  const s = ctx.state.subnets.find((x) => String(x.id) === id);
  return s ? ok(subnetJson(s)) : notFound('Subnet');
}

/**
 * Django's BooleanField through CheckboxInput.value_from_datadict (django/forms/widgets.py): "false"
 * (any case) and "" are false, every other value true, so "0" and "off" turn a flag ON (3.4.10 rows
 * bool-0, bool-off, managed-0, bool-false-word, bool-empty).
 */
function djangoBoolean(value: string): boolean {
  return value !== '' && value.toLowerCase() !== 'false';
}

/** 3.5.0+ SubnetForm.clean reads allow_dns / allow_proxy itself: "true", "t" and "1" (any case) are true, anything else false. */
function subnetFormTruthy(value: string): boolean {
  return ['true', 't', '1'].includes(value.toLowerCase());
}

/** How this region's SubnetForm reads a flag (forms/subnet.py): managed is a BooleanField in every version. */
function flagReader(ctx: SimContext, name: string): (value: string) => boolean {
  return name !== 'managed' && versionAtLeast(simVersion(ctx), 3, 5) ? subnetFormTruthy : djangoBoolean;
}

/**
 * PUT. Every omitted field keeps its stored value (APIEditMixin.full_clean, forms/__init__.py);
 * allow_dns / allow_proxy / managed: sent values as this version's SubnetForm reads them. dns_servers: every
 * value, each split on commas and whitespace; an empty value clears the list.
 */
export function updateSubnet(ctx: SimContext, req: SimRequest, id: string): SimResponse {
  const s = ctx.state.subnets.find((x) => String(x.id) === id);
  if (!s) return notFound('Subnet');
  // api/subnets.py update: get_subnet_or_404(NodePermission.admin); auth/local.py grants it to superusers only.
  if (!isAdmin(ctx)) return forbidden();
  const form = req.form;

  let dnsServers = s.dns_servers;
  if (form.has('dns_servers')) {
    dnsServers = lastValue(form, 'dns_servers') === '' ? [] : form.getAll('dns_servers').flatMap((v) => v.split(/[,\s]+/).filter(Boolean));
    const bad = dnsServers.find((ip) => isIP(ip) === 0);
    if (bad !== undefined) return invalid({ __all__: [`Invalid IP address: ${bad}; provide a list of space-separated IP addresses`] });
  }
  const omitted = ctx.rules.subnetOmittedFlags === 'not-maas-reset-to-true' ? () => true : (current: boolean) => current;
  const flag = (name: string, current: boolean) => {
    const value = lastValue(form, name);
    return value === undefined ? omitted(current) : flagReader(ctx, name)(value);
  };

  const before = structuredClone(s);
  s.dns_servers = dnsServers;
  s.allow_dns = flag('allow_dns', s.allow_dns);
  s.allow_proxy = flag('allow_proxy', s.allow_proxy);
  s.managed = flag('managed', s.managed);
  const name = lastValue(form, 'name');
  if (name) s.name = name;
  const description = lastValue(form, 'description');
  if (description !== undefined) s.description = description;
  const gateway = lastValue(form, 'gateway_ip');
  if (gateway !== undefined) s.gateway_ip = gateway === '' ? null : gateway;
  // Up to 3.6 a database trigger has the racks rewrite dhcpd.conf; 3.7 starts nothing for these fields.
  if (ctx.state.dhcp && subnetEditRewritesDhcp(simVersion(ctx)) && s.vlan.dhcp_on && dhcpFieldsChanged(before, s)) rewriteAfterTrigger(ctx.state, s.id);
  return ok(subnetJson(s));
}
