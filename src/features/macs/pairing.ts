import { normaliseMac } from '../../core/mac.ts';
import type { MaasInterface, MaasMachine } from '../../adapters/maas/types.ts';
import type { LiveNic } from '../../adapters/ssh/virsh.ts';

export interface InterfacePair {
  iface: MaasInterface;
  live: LiveNic;
}

export interface Pairing {
  /** Recorded MAC is on the live domain. */
  matched: InterfacePair[];
  /** Recorded MAC is gone; the live NIC it must be is known without a guess. */
  drifted: InterfacePair[];
  /** Unmatched interfaces that cannot be paired safely (null when there are none). */
  ambiguous: { recorded: MaasInterface[]; live: LiveNic[]; reason: string } | null;
}

/**
 * The physical interfaces MAAS records, boot interface first, then by id (MAAS creates them in
 * the order commissioning discovers them). Bonds, bridges and VLANs borrow a member's MAC.
 */
export function recordedInterfaces(machine: MaasMachine): MaasInterface[] {
  const physical = machine.interface_set.filter((i) => i.type === 'physical');
  if (!physical.length && machine.boot_interface) return [machine.boot_interface];
  const bootId = machine.boot_interface?.id;
  return [...physical].sort((a, b) => Number(b.id === bootId) - Number(a.id === bootId) || a.id - b.id);
}

/**
 * Pairs recorded interfaces with live NICs: equal MACs first (case and format do not matter);
 * then the rest only when that is unambiguous: as many unmatched on each side, paired in order
 * (boot interface with the first unmatched live NIC), and with more than one pair only when the
 * boot interface is also the first by id, so that both orders agree.
 */
export function pairInterfaces(machine: MaasMachine, nics: readonly LiveNic[]): Pairing {
  const recorded = recordedInterfaces(machine);
  const liveLeft = dedupe(nics);
  const matched: InterfacePair[] = [];
  const recordedLeft: MaasInterface[] = [];
  for (const iface of recorded) {
    const mac = normaliseMac(iface.mac_address ?? '');
    const at = mac ? liveLeft.findIndex((n) => n.mac === mac) : -1;
    if (at < 0) {
      recordedLeft.push(iface);
      continue;
    }
    matched.push({ iface, live: liveLeft[at] as LiveNic });
    liveLeft.splice(at, 1);
  }
  if (!recordedLeft.length) return { matched, drifted: [], ambiguous: null };
  const reason = ambiguity(machine, recordedLeft, liveLeft);
  if (reason) return { matched, drifted: [], ambiguous: { recorded: recordedLeft, live: liveLeft, reason } };
  const drifted = recordedLeft.map((iface, i) => ({ iface, live: liveLeft[i] as LiveNic }));
  return { matched, drifted, ambiguous: null };
}

function ambiguity(machine: MaasMachine, recorded: MaasInterface[], live: LiveNic[]): string | null {
  if (!live.length) return `${count(recorded.length, 'recorded interface')} not on the domain and no unmatched live NIC left`;
  if (recorded.length !== live.length) {
    return `${count(recorded.length, 'recorded interface')} unmatched against ${count(live.length, 'live NIC')}: the counts differ`;
  }
  if (recorded.length > 1) {
    const bootId = machine.boot_interface?.id;
    const lowestId = Math.min(...recorded.map((i) => i.id));
    if (bootId === undefined || !recorded.some((i) => i.id === bootId)) return `${recorded.length} unmatched interfaces and none of them is the boot interface`;
    if (bootId !== lowestId) return `${recorded.length} unmatched interfaces and the boot interface is not the first of them`;
  }
  return null;
}

function dedupe(nics: readonly LiveNic[]): LiveNic[] {
  const seen = new Set<string>();
  return nics.filter((n) => (seen.has(n.mac) ? false : (seen.add(n.mac), true)));
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
