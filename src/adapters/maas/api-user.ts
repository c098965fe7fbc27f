/**
 * Who the API key is (`GET users/?op=whoami`, canonical/maas api/users.py), asked once and kept
 * for a few minutes per MAAS client (one client per region), so that a command that needs a MAAS
 * admin refuses before it sends or runs anything anywhere.
 */
import { ChatopsError } from '../../core/errors.ts';
import type { MaasClient, MaasUser } from './types.ts';

/** How long an answer is reused: long enough for one job's plan and execute phases, short enough to see a new key. */
export const API_USER_TTL_MS = 5 * 60_000;

interface Cached {
  at: number;
  user: Promise<MaasUser>;
}

/** By the client's cacheKey (region, URL and key digest); a client without one is its own key. */
const byKey = new Map<string, Cached>();
const byClient = new WeakMap<MaasClient, Cached>();

function lookup(maas: MaasClient): Cached | undefined {
  return maas.cacheKey !== undefined ? byKey.get(maas.cacheKey) : byClient.get(maas);
}

function store(maas: MaasClient, entry: Cached | undefined): void {
  if (maas.cacheKey !== undefined) {
    if (entry) byKey.set(maas.cacheKey, entry);
    else byKey.delete(maas.cacheKey);
  } else if (entry) byClient.set(maas, entry);
  else byClient.delete(maas);
}

/** The MAAS user behind the client's API key; one whoami per region and key every API_USER_TTL_MS. */
export function apiUserOf(maas: MaasClient, now: () => number = Date.now): Promise<MaasUser> {
  const hit = lookup(maas);
  if (hit && now() - hit.at < API_USER_TTL_MS) return hit.user;
  const user = maas.whoami();
  store(maas, { at: now(), user });
  // A failed answer is not kept: the next job asks again.
  user.catch(() => {
    if (lookup(maas)?.user === user) store(maas, undefined);
  });
  return user;
}

/** What a command needs the admin right for: the MAAS calls, as an operator would look them up. */
export interface AdminNeed {
  /** The command, e.g. `mac-diff`. */
  command: string;
  /** The MAAS calls that need a superuser, e.g. `GET machines/?op=power_parameters`. */
  calls: string;
  /** The canonical/maas rule, e.g. `api/nodes.py: @admin_method`. */
  rule: string;
}

/** Admin rights each command needs, with the MAAS rule behind it (README: "What the MAAS API key needs"). */
export const ADMIN_NEEDS = {
  'mac-diff': {
    command: 'mac-diff',
    calls: 'GET machines/?op=power_parameters (the virsh power addresses; they carry BMC and virsh passwords)',
    rule: 'api/nodes.py: power_parameters is an @admin_method',
  },
  'fix-macs': {
    command: 'fix-macs',
    calls: 'GET machines/?op=power_parameters, PUT nodes/<id>/interfaces/<id>/ and POST machines/<id>/?op=commission',
    rule: 'auth/local.py: "Machine interface can only be modified by an administrator"; api/machines.py: commission needs NodePermission.admin',
  },
  'fix-dns': {
    command: 'fix-dns',
    calls: 'PUT dnsresources/<id>/',
    rule: 'api/dnsresources.py: update asks NodePermission.admin, which auth/local.py grants only to superusers',
  },
  'fix-resolver': {
    command: 'fix-resolver',
    calls: 'PUT subnets/<id>/',
    rule: 'api/subnets.py: update asks NodePermission.admin, which auth/local.py grants only to superusers',
  },
} as const satisfies Record<string, AdminNeed>;

export type AdminCommand = keyof typeof ADMIN_NEEDS;

/**
 * Resolves to the API user when it is a MAAS superuser; otherwise throws a GUARD_REFUSED error
 * that names the missing right, the MAAS call that needs it and what to configure.
 */
export async function requireAdmin(maas: MaasClient, region: string, command: AdminCommand): Promise<MaasUser> {
  const user = await apiUserOf(maas);
  if (user.is_superuser) return user;
  const need: AdminNeed = ADMIN_NEEDS[command];
  throw new ChatopsError(
    'GUARD_REFUSED',
    `${need.command} needs a MAAS admin and the API key for MAAS ${region} is ${user.username}'s, who is not one: nothing was sent or run. MAAS lets only superusers do ${need.calls} (${need.rule})`,
    { hint: `Set maas.${region}.apiKey to the API key of a MAAS admin of that region (\`maas apikey --username=<admin>\`); dns-check and resolver-check work with any key` },
  );
}
