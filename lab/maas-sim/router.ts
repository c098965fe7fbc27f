/** Which handler answers which MAAS 2.0 path and method. */
import { getConfig, listBootImages } from './boot-images.ts';
import { listDiscoveries, unknownMacDiscoveries } from './discoveries.ts';
import { queryEvents } from './events.ts';
import { getDnsResource, listDnsResources, updateDnsResource } from './dns-resources.ts';
import { getInterface, listInterfaces, updateInterface } from './interfaces.ts';
import { getIpRange, listIpRanges, updateIpRange } from './ipranges.ts';
import { commission, getMachine, listMachines, machinePowerParameters, markBroken, markFixed, powerParameters, setLocked } from './machines.ts';
import { rackControllerJson } from './render.ts';
import { getSubnet, listSubnets, updateSubnet } from './subnets.ts';
import { isAdmin, ok, text, type SimContext, type SimRequest, type SimResponse } from './sim-http.ts';

type Handlers = Partial<Record<string, (ctx: SimContext, req: SimRequest, args: string[]) => SimResponse>>;

interface Route {
  pattern: string[];
  /** Keyed by `METHOD` or `METHOD op`. */
  handlers: Handlers;
}

const ROUTES: Route[] = [
  {
    pattern: ['machines', ''],
    handlers: { GET: listMachines, 'GET power_parameters': powerParameters },
  },
  {
    pattern: ['machines', '*', ''],
    handlers: {
      GET: (ctx, _req, [id]) => getMachine(ctx, id ?? ''),
      'GET power_parameters': (ctx, _req, [id]) => machinePowerParameters(ctx, id ?? ''),
      'POST mark_broken': (ctx, req, [id]) => markBroken(ctx, req, id ?? ''),
      'POST mark_fixed': (ctx, _req, [id]) => markFixed(ctx, id ?? ''),
      'POST commission': (ctx, _req, [id]) => commission(ctx, id ?? ''),
      'POST lock': (ctx, _req, [id]) => setLocked(ctx, id ?? '', true),
      'POST unlock': (ctx, _req, [id]) => setLocked(ctx, id ?? '', false),
    },
  },
  {
    pattern: ['nodes', '*', 'interfaces', ''],
    handlers: { GET: (ctx, _req, [id]) => listInterfaces(ctx, id ?? '') },
  },
  {
    pattern: ['nodes', '*', 'interfaces', '*', ''],
    handlers: {
      GET: (ctx, _req, [id, iid]) => getInterface(ctx, id ?? '', iid ?? ''),
      PUT: (ctx, req, [id, iid]) => updateInterface(ctx, req, id ?? '', iid ?? ''),
    },
  },
  { pattern: ['dnsresources', ''], handlers: { GET: listDnsResources } },
  {
    pattern: ['dnsresources', '*', ''],
    handlers: {
      GET: (ctx, _req, [id]) => getDnsResource(ctx, id ?? ''),
      PUT: (ctx, req, [id]) => updateDnsResource(ctx, req, id ?? ''),
    },
  },
  { pattern: ['subnets', ''], handlers: { GET: (ctx) => listSubnets(ctx) } },
  {
    pattern: ['subnets', '*', ''],
    handlers: {
      GET: (ctx, _req, [id]) => getSubnet(ctx, id ?? ''),
      PUT: (ctx, req, [id]) => updateSubnet(ctx, req, id ?? ''),
    },
  },
  { pattern: ['ipranges', ''], handlers: { GET: (ctx) => listIpRanges(ctx) } },
  {
    pattern: ['ipranges', '*', ''],
    handlers: {
      GET: (ctx, _req, [id]) => getIpRange(ctx, id ?? ''),
      PUT: (ctx, req, [id]) => updateIpRange(ctx, req, id ?? ''),
    },
  },
  {
    pattern: ['users', ''],
    handlers: {
      'GET whoami': (ctx) => ok({ username: ctx.caller.username, email: `${ctx.caller.username}@maas.example`, is_local: true, is_superuser: ctx.caller.isAdmin }),
    },
  },
  { pattern: ['discovery', ''], handlers: { GET: listDiscoveries, 'GET by_unknown_mac': unknownMacDiscoveries } },
  { pattern: ['events', ''], handlers: { 'GET query': queryEvents } },
  {
    pattern: ['rackcontrollers', ''],
    // A non-admin sees no rack controller (row rackcontrollers, operator's key).
    handlers: { GET: (ctx) => ok(isAdmin(ctx) ? [...ctx.state.rackControllers].sort((a, b) => a.id - b.id).map((r) => rackControllerJson(ctx.state, r)) : []) },
  },
  { pattern: ['rackcontrollers', '*', ''], handlers: { 'GET list_boot_images': (ctx, _req, [id]) => listBootImages(ctx, id ?? '') } },
  { pattern: ['maas', ''], handlers: { 'GET get_config': getConfig } },
];

function match(pattern: string[], segments: string[]): string[] | undefined {
  if (pattern.length !== segments.length) return undefined;
  const args: string[] = [];
  for (const [n, part] of pattern.entries()) {
    const segment = segments[n] ?? '';
    if (part === '*') {
      if (!segment) return undefined;
      args.push(segment);
    } else if (part !== segment) return undefined;
  }
  return args;
}

export function route(ctx: SimContext, req: SimRequest): SimResponse {
  for (const r of ROUTES) {
    const args = match(r.pattern, req.segments);
    if (!args) continue;
    const handler = r.handlers[req.op ? `${req.method} ${req.op}` : req.method];
    if (handler) return handler(ctx, req, args);
    const methodKnown = Object.keys(r.handlers).some((key) => key.split(' ')[0] === req.method);
    // piston's OperationsResource answers an unknown op with 400, an unknown method with 405.
    if (methodKnown || req.op) return text(400, `Unrecognised signature: method=${req.method} op=${req.op ?? 'None'}`);
    return text(405, 'Method Not Allowed');
  }
  // api/support.py / urls_api.py: an unknown endpoint names itself (row unknown-path).
  return text(404, `Unknown API endpoint: /MAAS/api/2.0/${req.segments.join('/')}.`);
}
