/**
 * dnsresources/ as canonical/maas serves it (api/dnsresources.py, forms/dnsresource.py,
 * models/dnsresource.py separate_fqdn).
 */
import { isIP } from 'node:net';
import { dnsResourceJson } from './render.ts';
import { domainOf, knownDomains, nameOf } from './scenario-lookups.ts';
import { forbidden, invalid, isAdmin, text, lastValue, notFound, ok, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

/** GET dnsresources/?fqdn= (or name=, domain=). A domain MAAS does not know is a 404, not an empty list. */
export function listDnsResources(ctx: SimContext, req: SimRequest): SimResponse {
  let name = req.query.get('name') ?? undefined;
  let domain = req.query.get('domain') ?? undefined;
  const fqdn = req.query.get('fqdn');
  if (name === undefined && domain === undefined && fqdn !== null) {
    if (knownDomains(ctx.state).includes(fqdn)) {
      name = '@';
      domain = fqdn;
    } else {
      name = nameOf(fqdn);
      domain = domainOf(fqdn);
    }
  }
  if (domain !== undefined && !knownDomains(ctx.state).includes(domain)) return notFound('Domain');
  const found = ctx.state.dnsresources
    .filter((r) => domain === undefined || domainOf(r.fqdn) === domain)
    .filter((r) => name === undefined || nameOf(r.fqdn) === name)
    .sort((a, b) => domainOf(a.fqdn).localeCompare(domainOf(b.fqdn)) || nameOf(a.fqdn).localeCompare(nameOf(b.fqdn)));
  return ok(found.map(dnsResourceJson));
}

export function getDnsResource(ctx: SimContext, id: string): SimResponse {
  const r = ctx.state.dnsresources.find((x) => String(x.id) === id);
  return r ? ok(dnsResourceJson(r)) : notFound('DNSResource');
}

/**
 * PUT: `ip_addresses` is read with QueryDict.get (a repeated field keeps only the last value) and
 * split on whitespace; an empty value clears every address. An omitted field changes nothing.
 */
export function updateDnsResource(ctx: SimContext, req: SimRequest, id: string): SimResponse {
  const r = ctx.state.dnsresources.find((x) => String(x.id) === id);
  if (!r) return notFound('DNSResource');
  // api/dnsresources.py update: get_dnsresource_or_404(NodePermission.admin); auth/local.py grants it to superusers only.
  if (!isAdmin(ctx)) return forbidden();
  const raw = lastValue(req.form, 'ip_addresses');
  let ips = r.ip_addresses;
  if (raw !== undefined) {
    ips = raw.split(/\s+/).filter((ip) => ip.length > 0);
    const bad = ips.find((ip) => isIP(ip) === 0);
    // forms/dnsresource.py clean_ip passes a value that is not an IP on, and netaddr fails later:
    // an unhandled 500, not a 400 (rows dns-put-comma, dns-put-bad-ip). StaticIPAddress ids: the simulator knows none.
    if (bad !== undefined) return text(500, `failed to detect a valid IP address from '${bad}'`);
  }
  const ttl = lastValue(req.form, 'address_ttl');
  if (ttl !== undefined) {
    if (ttl !== '' && !/^\d+$/.test(ttl)) return invalid({ address_ttl: ['Enter a whole number.'] });
    r.address_ttl = ttl === '' ? null : Number(ttl);
  }
  r.ip_addresses = [...new Set(ips)];
  return ok(dnsResourceJson(r));
}
