import type { MaasUser } from '../maas/types.ts';
import { evaluateMacs, type MacSnapshot } from '../checks/macs.ts';
import type { MaasMachine } from '../maas/types.ts';
import type { Finding, PlanStep, StepResult } from '../report.ts';
import { BUSY, DIRECT_EDIT, NEVER_MARK_BROKEN, VIA_BROKEN } from './mac-states.ts';
import { subjectCount, withId, type RepairPlan } from './plan.ts';

export interface MacDriftItem {
  interfaceId: number;
  interface: string;
  recorded: string;
  live: string;
}

/** Pure: a fresh mac-diff snapshot in, the fix-macs plan out. */
export interface MacPlanOptions {
  maxSubjects: number;
  /**
   * The MAAS user behind the API key (`users/?op=whoami`); undefined when it could not be read.
   * Interface edits and mark_fixed need an admin, mark_broken the machine's owner.
   */
  apiUser?: MaasUser;
}

export function planMacRepair(snapshot: MacSnapshot, options: MacPlanOptions): RepairPlan {
  const { findings, verdict: checkVerdict } = evaluateMacs(snapshot);
  const drifts = driftsByMachine(findings);
  const blocked = blockedMachines(findings);
  const steps: PlanStep[] = [];
  const refusals: StepResult[] = [];
  const overBound: string[] = [];

  for (const machine of snapshot.machines) {
    const items = drifts.get(machine.system_id);
    if (!items?.length) continue;
    const block = blocked.get(machine.system_id);
    if (block) {
      refusals.push(refusal(machine, block));
      continue;
    }
    const machineSteps = stepsFor(machine, items, options.apiUser);
    if ('refused' in machineSteps) {
      refusals.push(refusal(machine, machineSteps.refused));
      continue;
    }
    if (subjectCount(steps) >= options.maxSubjects) {
      overBound.push(machine.hostname);
      continue;
    }
    steps.push(...machineSteps.steps);
  }
  for (const hostname of overBound) {
    refusals.push({
      subject: hostname,
      action: 'set-mac',
      outcome: 'refused',
      detail: `over the bound of ${options.maxSubjects} machines per plan (repair.maxSubjects): run fix-macs ${snapshot.site} again after this plan`,
    });
  }
  for (const [systemId, reason] of blocked) {
    if (drifts.has(systemId)) continue;
    const machine = snapshot.machines.find((m) => m.system_id === systemId);
    if (machine) refusals.push(refusal(machine, reason));
  }
  return withId({
    kind: 'fix-macs',
    target: snapshot.site,
    steps,
    refusals,
    findings,
    verdict: planVerdict(snapshot.site, steps, refusals, checkVerdict),
  });
}

function driftsByMachine(findings: readonly Finding[]): Map<string, MacDriftItem[]> {
  const out = new Map<string, MacDriftItem[]>();
  for (const f of findings) {
    if (f.code !== 'MAC_DRIFT') continue;
    const e = f.evidence as { systemId?: unknown; interfaceId?: unknown; interface?: unknown; recorded?: unknown; live?: unknown };
    if (typeof e.systemId !== 'string' || typeof e.interfaceId !== 'number' || typeof e.live !== 'string') continue;
    const list = out.get(e.systemId) ?? [];
    list.push({ interfaceId: e.interfaceId, interface: String(e.interface ?? ''), recorded: String(e.recorded ?? ''), live: e.live });
    out.set(e.systemId, list);
  }
  return out;
}

/** MAC_AMBIGUOUS and MAC_IN_USE machines are never repaired automatically. */
function blockedMachines(findings: readonly Finding[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of findings) {
    const systemId = f.evidence.systemId;
    if (typeof systemId !== 'string') continue;
    if (f.code === 'MAC_AMBIGUOUS') out.set(systemId, `MAC_AMBIGUOUS: ${f.summary}; fix-macs will not guess. ${f.fix ?? ''}`.trim());
    if (f.code === 'MAC_IN_USE') out.set(systemId, `MAC_IN_USE: ${f.summary}. ${f.fix ?? ''}`.trim());
  }
  return out;
}

function stepsFor(machine: MaasMachine, items: MacDriftItem[], apiUser: MaasUser | undefined): { steps: PlanStep[] } | { refused: string } {
  const status = machine.status;
  const name = machine.status_name;
  if (apiUser && !apiUser.is_superuser) {
    return { refused: `the API key's MAAS user ${apiUser.username} is not a MAAS admin, and MAAS lets only admins edit a machine's interfaces (and mark it fixed); use an admin's API key for this region` };
  }
  const base = { systemId: machine.system_id, hostname: machine.hostname };
  const setMacs = (why: string): PlanStep[] =>
    items.map((item) => ({
      subject: machine.hostname,
      action: 'set-mac',
      detail: `${item.interface}: ${item.recorded || '(none)'} → ${item.live} (${why})`,
      params: { ...base, interfaceId: item.interfaceId, interface: item.interface, from: item.recorded, to: item.live },
    }));
  if (DIRECT_EDIT.has(status)) {
    return { steps: setMacs(`${name}: MAAS takes the interface edit as the machine stands`) };
  }
  if (BUSY.has(status)) {
    return { refused: `${name}: MAAS is working on this machine and refuses interface edits (409); run fix-macs again once it has settled` };
  }
  if (NEVER_MARK_BROKEN.has(status)) {
    return {
      refused: `${name}: MAAS takes no interface edit in this state without mark_broken, and mark_broken would release this machine and power it off (models/node.py: it is releasable); update the MAC by hand once someone has decided what should happen to it`,
    };
  }
  if (VIA_BROKEN.has(status)) {
    if (!machine.owner) {
      return {
        refused: `${name} with no owner: MAAS lets only a machine's owner mark it broken (403 otherwise), so the mark_broken → update → mark_fixed cycle cannot run. Have the MAAS user behind the API key acquire it, or update the MAC in the MAAS UI`,
      };
    }
    if (!apiUser) {
      return { refused: `${name}: the MAAS user behind the API key could not be read (users/?op=whoami), so it is not certain the machine could be marked fixed again after mark_broken; not starting the cycle` };
    }
    if (machine.owner !== apiUser.username) {
      return { refused: `${name}, owned by ${machine.owner}: MAAS lets only the owner mark it broken, and the API key is ${apiUser.username}'s; have ${machine.owner} run it, or update the MAC in the MAAS UI` };
    }
    return {
      steps: [
        { subject: machine.hostname, action: 'mark-broken', detail: `${name} → Broken, so that MAAS takes the interface edit`, params: { ...base, status: name, owner: machine.owner } },
        ...setMacs('while Broken'),
        { subject: machine.hostname, action: 'mark-fixed', detail: 'Broken → Ready, to be commissioned again', params: base },
      ],
    };
  }
  return {
    refused: `${name}: fix-macs does not change machines in this state (after a failed rescue, mark_broken → mark_fixed would bring a deployed machine back as Ready); update the MAC by hand once the machine is in a state MAAS allows edits in`,
  };
}

function refusal(machine: MaasMachine, detail: string): StepResult {
  return { subject: machine.hostname, action: 'set-mac', outcome: 'refused', detail };
}

function planVerdict(site: string, steps: readonly PlanStep[], refusals: readonly StepResult[], checkVerdict: string): string {
  const machines = subjectCount(steps);
  const macs = steps.filter((s) => s.action === 'set-mac').length;
  const cycles = steps.filter((s) => s.action === 'mark-broken').length;
  const refused = refusals.length ? `; ${refusals.length} machine${refusals.length === 1 ? '' : 's'} left alone (see why)` : '';
  if (!steps.length) return `Nothing to repair at ${site}${refused}: ${checkVerdict}`;
  const via = cycles ? ` (${cycles} through mark_broken → update → mark_fixed)` : '';
  return `Plan: update ${macs} MAC${macs === 1 ? '' : 's'} on ${machines} machine${machines === 1 ? '' : 's'} at ${site}${via}${refused}`;
}
