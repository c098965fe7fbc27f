/** The small request/response model the simulator's handlers work on. */
import type { MaasScenario } from './scenario.ts';

export interface SimRequest {
  method: string;
  /** Path segments after /MAAS/api/2.0/, the trailing slash kept as a last empty segment. */
  segments: string[];
  query: URLSearchParams;
  form: URLSearchParams;
  /** `op` from the query string or, as MAAS also reads it, from the form. */
  op: string | undefined;
}

export interface SimResponse {
  status: number;
  /** JSON-serialisable value, or text sent as text/plain. */
  json?: unknown;
  text?: string;
  /** For `text`; default text/plain. MAAS's OAuth errors are text/html (piston3 send_oauth_error). */
  contentType?: string;
}

export interface SimRules {
  /**
   * What a subnet PUT does with an omitted allow_dns / allow_proxy / managed. `keep` (the default) is
   * MAAS: APIEditMixin.full_clean (forms/__init__.py) fills every absent field from the stored subnet
   * before SubnetForm.clean runs, so its "defaults to true" applies on create only.
   * `not-maas-reset-to-true` is NOT MAAS's behaviour: a stricter peer for tests that show the client
   * never relies on an omitted flag being kept.
   */
  subnetOmittedFlags: 'keep' | 'not-maas-reset-to-true';
}

/** How long the simulated machines take; MAAS's own clock is the simulator's `now`. */
export interface SimTiming {
  /** From `commission` to Ready when MAAS knows the MAC the machine PXE-boots from. Default 0: done at the next request. */
  commissioningMs: number;
  /** MAAS's node_timeout in minutes (maascommon/constants.py NODE_TIMEOUT = 30): an unheard-of node is then marked failed. */
  nodeTimeoutMinutes: number;
  /** false: MAAS's status monitor (status_monitor.py) never runs, so a commissioning that hears nothing hangs. */
  statusMonitor: boolean;
}

/** The MAAS user whose key signed the request being answered. */
export interface SimCaller {
  username: string;
  isAdmin: boolean;
}

export interface SimContext {
  state: MaasScenario;
  /** Who is asking; set per request (the scenario's user unless another user's key signed it). */
  caller: SimCaller;
  rules: SimRules;
  timing: SimTiming;
  /** The simulator's clock (ms); tests give a fake one so that MAAS's 30 minutes pass at once. */
  now: () => number;
}

/** The MAAS version a scenario without one answers as. */
export const DEFAULT_SIM_VERSION = '3.5.0';

export const ok = (json: unknown): SimResponse => ({ status: 200, json });
export const text = (status: number, body: string): SimResponse => ({ status, text: body });
/** Django's Http404 text, as MAAS sends it. */
export const notFound = (model: string): SimResponse => text(404, `No ${model} matches the given query.`);
/** MAASAPIValidationError with a dict of field errors: JSON. */
export const invalid = (errors: Record<string, string[]>): SimResponse => ({ status: 400, json: errors });
export const conflict = (message: string): SimResponse => text(409, message);
/** MAASAPIForbidden() carries no message. */
export const forbidden = (): SimResponse => text(403, '');
/** api/support.py admin_method: PermissionDenied(METHOD_RESERVED_ADMIN). */
export const adminOnly = (): SimResponse => text(403, 'This method is reserved for admin users.');
/** Only superusers (no RBAC): auth/local.py grants NodePermission.admin on machines, interfaces, DNS resources and subnets to them alone. */
export const isAdmin = (ctx: SimContext): boolean => ctx.caller.isAdmin;

/** The last value of a form field, as Django's QueryDict.get returns it. */
export function lastValue(form: URLSearchParams, name: string): string | undefined {
  const all = form.getAll(name);
  return all.length ? all[all.length - 1] : undefined;
}
