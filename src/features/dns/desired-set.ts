import { CONTROL_PLANE_LABEL, MACHINE_RUNNING_STATES } from '../../adapters/kube/capmaas.ts';
import type { MaasMachineObject } from '../../adapters/kube/types.ts';
import { ipInSubnets } from './cidr.ts';
import { compareStrings, dnsHash } from './dns-hash.ts';

/** One control-plane MaasMachine as the controller sees it. */
export interface ControlPlaneMachine {
  name: string;
  systemId: string | null;
  state: string | null;
  powered: boolean;
  deleting: boolean;
  running: boolean;
  /** The IP the controller takes: the first ExternalIP inside a preferred subnet. */
  ip: string | null;
  externalIps: string[];
}

export interface DesiredSet {
  /** Deduplicated and sorted as strings: what the fixed controller writes. */
  ips: string[];
  /** In machine order, duplicates kept: what an unpatched controller hashes. */
  rawIps: string[];
  controlPlane: ControlPlaneMachine[];
  /** Control-plane machines without a deletionTimestamp. */
  existingCount: number;
  /** Existing control-plane machines that are powered and Deploying/Deployed. */
  runningCount: number;
  /** Hashes a controller would store for this set: fixed (dedup) first, unpatched second. */
  hashes: string[];
}

/**
 * reconcileDNSAttachments() of the fixed controller (v4.9.2, controllers/maascluster_controller.go):
 * control-plane machines (label present, any value), skip those being deleted or not running,
 * take each one's first ExternalIP inside the preferred subnets, drop empties, dedup.
 */
export function computeDesiredSet(machines: readonly MaasMachineObject[], preferredSubnets: readonly string[] | null): DesiredSet {
  const controlPlane = machines.filter(isControlPlane).map((m) => viewOf(m, preferredSubnets));
  const eligible = controlPlane.filter((m) => !m.deleting && m.running);
  const rawIps = eligible.map((m) => m.ip).filter((ip): ip is string => ip !== null && ip !== '');
  const ips = [...new Set(rawIps)].sort(compareStrings);
  const hashes = [...new Set([dnsHash(ips), dnsHash(rawIps)])];
  return {
    ips,
    rawIps,
    controlPlane,
    existingCount: controlPlane.filter((m) => !m.deleting).length,
    runningCount: eligible.length,
    hashes,
  };
}

export function isControlPlane(machine: MaasMachineObject): boolean {
  return Object.prototype.hasOwnProperty.call(machine.metadata.labels ?? {}, CONTROL_PLANE_LABEL);
}

/** IsRunning(): powered on and in a running state; a missing state is not running. */
export function isRunning(machine: MaasMachineObject): boolean {
  const state = machine.status?.machineState;
  return machine.status?.machinePowered === true && state !== undefined && MACHINE_RUNNING_STATES.includes(state);
}

function viewOf(machine: MaasMachineObject, preferredSubnets: readonly string[] | null): ControlPlaneMachine {
  const externalIps = (machine.status?.addresses ?? []).filter((a) => a.type === 'ExternalIP').map((a) => a.address);
  const ip = externalIps.find((address) => ipInSubnets(address, preferredSubnets)) ?? null;
  return {
    name: machine.metadata.name,
    systemId: machine.spec?.systemID ?? null,
    state: machine.status?.machineState ?? null,
    powered: machine.status?.machinePowered === true,
    deleting: Boolean(machine.metadata.deletionTimestamp),
    running: isRunning(machine),
    ip: ip === '' ? null : ip,
    externalIps,
  };
}
