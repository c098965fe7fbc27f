import { ConfigError } from './errors.ts';

/** What the rule reads of a route and of the config (config.ts calls it, so it cannot import config.ts). */
interface RouteShape {
  check: string;
  target?: string;
}
interface ConfigShape {
  sites: Record<string, unknown>;
  clusters: Record<string, unknown>;
  alertmanager?: { routes: readonly RouteShape[] };
}

/**
 * The checks an `alertmanager.routes` entry may name, and what each takes as its target. The
 * registry (src/features/registry.ts) sits above core, so the table is kept here and a test holds it
 * equal to the registry's checks.
 */
export const ROUTABLE_CHECKS: Readonly<Record<string, 'site' | 'cluster'>> = {
  'dns-check': 'cluster',
  'resolver-check': 'site',
  'mac-diff': 'site',
  'dhcp-check': 'site',
};

/**
 * Refuses at start what would otherwise only be counted as unrouted at 3 a.m.: a route naming a
 * repair (an alert must never change anything), a check that does not exist, or a fixed target
 * that is not configured. A `targetLabel` is read per alert and cannot be checked here.
 */
export function checkAlertRoutes(config: ConfigShape, path: string): void {
  config.alertmanager?.routes.forEach((route, i) => checkRoute(config, route, `${path}: alertmanager.routes[${i}]`));
}

function checkRoute(config: ConfigShape, route: RouteShape, where: string): void {
  const checks = Object.keys(ROUTABLE_CHECKS).join(', ');
  const kind = ROUTABLE_CHECKS[route.check];
  if (!kind) {
    const repair = /^fix-/.test(route.check);
    const fix = repair ? `Name the check instead (an alert runs only read-only checks; a person runs /maas ${route.check} from its answer)` : `Set check to one of ${checks}`;
    throw new ConfigError(`${where}.check: "${route.check}" ${repair ? 'is a repair' : 'is not a check'}; routes may name only checks: ${checks}`, fix);
  }
  if (route.target === undefined) return;
  const targets = Object.keys(kind === 'site' ? config.sites : config.clusters);
  if (targets.includes(route.target)) return;
  const known = targets.length ? `known: ${targets.join(', ')}` : `no ${kind}s are configured`;
  throw new ConfigError(`${where}.target: no ${kind} "${route.target}" (${route.check} takes a ${kind}); ${known}`, `Name a ${kind} under ${kind}s:, or use targetLabel to take it from the alert's labels`);
}
