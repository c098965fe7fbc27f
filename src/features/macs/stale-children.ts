import { normaliseMac } from '../../core/mac.ts';
import type { MaasMachine } from '../../adapters/maas/types.ts';
import type { Finding } from '../../core/report.ts';

/**
 * Bonds and bridges keep their own MAC when a member's changes; only a VLAN copies its parent's
 * (canonical/maas models/interface.py VLANInterface.save, models/signals/interfaces.py). A bond or
 * bridge whose MAC is neither one of its members' (as MAAS records them) nor on the live domain
 * still carries a MAC that is gone: typically a member's old one, after the member was repaired.
 * MAAS gives a new bond its first member's MAC (forms/interface.py), which is what fix-macs sets.
 */
export function staleChildFindings(site: string, machine: MaasMachine, liveMacs: readonly string[]): Finding[] {
  const byName = new Map(machine.interface_set.map((i) => [i.name, i]));
  const live = new Set(liveMacs.map((m) => normaliseMac(m)));
  const out: Finding[] = [];
  for (const child of machine.interface_set) {
    if (child.type !== 'bond' && child.type !== 'bridge') continue;
    const members = (child.parents ?? []).map((name) => byName.get(name)).filter((i) => i !== undefined);
    const first = members[0];
    const mac = normaliseMac(child.mac_address ?? '');
    if (!first || !mac) continue;
    const memberMacs = members.map((m) => normaliseMac(m.mac_address ?? ''));
    if (memberMacs.includes(mac) || live.has(mac)) continue;
    const to = normaliseMac(first.mac_address ?? '') ?? first.mac_address;
    out.push({
      code: 'MAC_CHILD_STALE',
      severity: 'warning',
      subject: machine.hostname,
      summary: `${machine.hostname}: ${child.type} ${child.name} still carries ${mac}, which none of its members (${members.map((m) => m.name).join(', ')}) has and the live domain does not: MAAS does not change a ${child.type}'s MAC with its members'`,
      evidence: { systemId: machine.system_id, hostname: machine.hostname, status: machine.status_name, interface: child.name, interfaceId: child.id, type: child.type, recorded: mac, members: members.map((m) => ({ interface: m.name, mac: m.mac_address })), to },
      fix: `/maas fix-macs ${site} sets it to ${first.name}'s MAC (${to}), as MAAS gives a new ${child.type} its first member's`,
    });
  }
  return out;
}
