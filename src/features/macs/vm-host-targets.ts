import type { MaasMachine, PowerParameters } from '../../adapters/maas/types.ts';
import { parseVirshAddress, vmHostKey, type VirshAddress } from '../../adapters/ssh/virsh-uri.ts';

/** How a machine's live MACs can be read, decided from MAAS data alone. */
export type MachineTarget =
  | { kind: 'virsh'; vmHost: string; address: VirshAddress; domain: string }
  | { kind: 'not-virsh'; powerType: string }
  | { kind: 'bad-power'; reason: string };

export function machineTarget(machine: MaasMachine, power: PowerParameters | undefined): MachineTarget {
  if (machine.power_type !== 'virsh') return { kind: 'not-virsh', powerType: machine.power_type || '(none)' };
  const powerAddress = typeof power?.power_address === 'string' ? power.power_address : '';
  const domain = typeof power?.power_id === 'string' ? power.power_id : '';
  if (!powerAddress) return { kind: 'bad-power', reason: 'MAAS holds no power_address for this virsh machine' };
  if (!domain) return { kind: 'bad-power', reason: 'MAAS holds no power_id (libvirt domain) for this virsh machine' };
  const parsed = parseVirshAddress(powerAddress);
  if (!parsed.ok) return { kind: 'bad-power', reason: parsed.reason };
  return { kind: 'virsh', vmHost: vmHostKey(parsed.address), address: parsed.address, domain };
}

/** One VM host to probe: its address (from the first machine naming it) and every domain to read. */
export interface VmHostProbePlan {
  vmHost: string;
  address: VirshAddress;
  /** Distinct domains in first-seen order, each with the URI of the first machine naming it. */
  queries: { uri: string; domain: string }[];
  systemIds: string[];
}

export function planVmHostProbes(machines: readonly MaasMachine[], power: Record<string, PowerParameters>): VmHostProbePlan[] {
  const plans = new Map<string, VmHostProbePlan>();
  for (const machine of machines) {
    const target = machineTarget(machine, power[machine.system_id]);
    if (target.kind !== 'virsh') continue;
    let plan = plans.get(target.vmHost);
    if (!plan) {
      plan = { vmHost: target.vmHost, address: target.address, queries: [], systemIds: [] };
      plans.set(target.vmHost, plan);
    }
    plan.systemIds.push(machine.system_id);
    if (!plan.queries.some((q) => q.domain === target.domain)) plan.queries.push({ uri: target.address.localUri, domain: target.domain });
  }
  return [...plans.values()];
}
