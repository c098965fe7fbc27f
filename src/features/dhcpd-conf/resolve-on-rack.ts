import { sh } from '../../adapters/ssh/shell-quote.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';

/** Host names looked up on the rack for one reading; more are left unresolved. */
const MAX_NAMES = 8;

/**
 * A host name in option 6 is resolved by dhcpd itself, on the rack, to its first address
 * (common/parse.c parse_ip_addr_or_hostname: a host lookup limited to 4 bytes; dhcp-options(5),
 * "ip-address"): `getent ahostsv4` asks the same resolver library, over the same session, one
 * command for all names. A name that does not resolve maps to undefined.
 */
export async function resolveOnRack(session: SshSession, names: readonly string[], timeoutMs: number): Promise<Map<string, string | undefined>> {
  const asked = names.slice(0, MAX_NAMES);
  const resolved = new Map<string, string | undefined>();
  if (!asked.length) return resolved;
  const result = await session.exec(sh`for n in ${asked}; do printf '%s %s\\n' "$n" "$(getent ahostsv4 -- "$n" 2>/dev/null | head -n 1 | cut -d ' ' -f 1)"; done`, { timeoutMs });
  for (const line of result.stdout.split('\n')) {
    const [name, address] = line.trim().split(/\s+/);
    if (name && asked.includes(name)) resolved.set(name, address || undefined);
  }
  return resolved;
}
