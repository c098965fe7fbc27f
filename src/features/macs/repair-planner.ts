import { evaluateMacs, type MacSnapshot } from './evaluate.ts';
import { normaliseMac } from '../../core/mac.ts';
import { NODE_STATUS } from '../../adapters/maas/node-status.ts';
import { versionAtLeast } from '../../adapters/maas/maas-version.ts';
import type { MaasMachine, MaasUser } from '../../adapters/maas/types.ts';
import type { Finding, StepResult } from '../../core/report.ts';
import type { MacStep, PlanStep } from '../../engine/repair/plan-step.ts';
import { BUSY, DIRECT_EDIT, NEVER_MARK_BROKEN, RESCUE_FAILED, VIA_BROKEN } from './machine-states.ts';
import { subjectCount, withId, type RepairPlan } from '../../engine/repair/plan.ts';
import { commissionRefusal, type CommissionPreflight } from './commission-preflight.ts';

export interface MacDriftItem {
  interfaceId: number;
  interface: string;
  recorded: string;
  live: string;
}

/** Pure: a fresh mac-diff snapshot in, the fix-macs plan out. */
export interface MacPlanOptions {
  maxSubjects: number;
  /** Which batch this plan is, counted from the first (a "Plan the next batch" click); default 1. */
  batch?: number;
  /**
   * The MAAS user behind the API key (`users/?op=whoami`); undefined when it could not be read.
   * Interface edits and mark_fixed need an admin, mark_broken the machine's owner.
   */
  apiUser?: MaasUser;
  /** `GET version/`'s version: a New machine takes interface edits only from MAAS 3.3. Unknown: planned as 3.3+. */
  maasVersion?: string;
  /** Whether MAAS would accept `commission` now (commission-preflight.ts); undefined: not read, planned as if it would. */
  commissioning?: CommissionPreflight;
}

export function planMacRepair(snapshot: MacSnapshot, options: MacPlanOptions): RepairPlan {
  const { findings, verdict: checkVerdict } = evaluateMacs(snapshot);
  const drifts = driftsByMachine(findings);
  const blocked = blockedMachines(findings);
  const steps: MacStep[] = [];
  const refusals: StepResult[] = [];
  const overBound: string[] = [];

  const staleChildren = staleChildrenByMachine(findings);
  const leftBroken = leftBrokenByMachine(findings);
  for (const machine of snapshot.machines) {
    const items = drifts.get(machine.system_id) ?? [];
    const stale = staleChildren.get(machine.system_id) ?? [];
    const left = leftBroken.get(machine.system_id);
    if (!items.length && !stale.length && !left) continue;
    const block = blocked.get(machine.system_id);
    if (block) {
      refusals.push(refusal(machine, block));
      continue;
    }
    const machineSteps = left ? leftBrokenSteps(machine, items, stale, left, options) : stepsFor(machine, items, stale, options);
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
    ...(overBound.length ? { deferred: overBound } : {}),
    ...(overBound.length || (options.batch ?? 1) > 1 ? { batch: options.batch ?? 1 } : {}),
    verdict: batchVerdict(planVerdict(snapshot.site, steps, refusals, checkVerdict), overBound.length, options.maxSubjects, options.batch ?? 1),
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

interface StaleChild {
  interfaceId: number;
  interface: string;
  type: string;
  recorded: string;
  to: string;
}

/** MAC_CHILD_STALE: bonds and bridges whose MAC none of their members has. */
function staleChildrenByMachine(findings: readonly Finding[]): Map<string, StaleChild[]> {
  const out = new Map<string, StaleChild[]>();
  for (const f of findings) {
    if (f.code !== 'MAC_CHILD_STALE') continue;
    const e = f.evidence as { systemId?: unknown; interfaceId?: unknown; interface?: unknown; type?: unknown; recorded?: unknown; to?: unknown };
    if (typeof e.systemId !== 'string' || typeof e.interfaceId !== 'number' || typeof e.to !== 'string') continue;
    const list = out.get(e.systemId) ?? [];
    list.push({ interfaceId: e.interfaceId, interface: String(e.interface ?? ''), type: String(e.type ?? ''), recorded: String(e.recorded ?? ''), to: e.to });
    out.set(e.systemId, list);
  }
  return out;
}

/** MAC_LEFT_BROKEN: by system id, the plan that marked the machine broken. */
function leftBrokenByMachine(findings: readonly Finding[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of findings) {
    if (f.code !== 'MAC_LEFT_BROKEN') continue;
    const { systemId, planId } = f.evidence;
    if (typeof systemId === 'string' && typeof planId === 'string') out.set(systemId, planId);
  }
  return out;
}

/**
 * A machine an earlier plan left Broken: the MACs still to update (Broken takes the edit directly),
 * then the commissioning that plan could not start. Never mark_fixed (Ready without commissioning).
 */
function leftBrokenSteps(machine: MaasMachine, items: MacDriftItem[], stale: StaleChild[], planId: string, options: MacPlanOptions): { steps: MacStep[] } | { refused: string } {
  const edits = stepsFor(machine, items, stale, options);
  if ('refused' in edits) return edits;
  const cannot = options.commissioning ? commissionRefusal(options.commissioning, machine.architecture, 'already-broken') : null;
  if (cannot) return { refused: `Broken since maas-chatops plan ${planId}: ${cannot}` };
  return {
    steps: [
      ...edits.steps,
      {
        subject: machine.hostname,
        action: 'commission',
        detail: `Broken since maas-chatops plan ${planId} (MAAS did not commission it then) → commissioning, followed until Ready or failed${preflightNote(options.commissioning)}`,
        params: { systemId: machine.system_id, hostname: machine.hostname },
      },
    ],
  };
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

function stepsFor(machine: MaasMachine, items: MacDriftItem[], stale: StaleChild[], options: MacPlanOptions): { steps: MacStep[] } | { refused: string } {
  const { apiUser } = options;
  const status = machine.status;
  const name = machine.status_name;
  if (apiUser && !apiUser.is_superuser) {
    return { refused: `the API key's MAAS user ${apiUser.username} is not a MAAS admin, and MAAS lets only admins edit a machine's interfaces and commission it; use an admin's API key for this region` };
  }
  if (machine.locked) {
    return {
      refused: `${name} and locked in MAAS: MAAS refuses every edit and admin action on a locked machine (403). If its MAC should change, unlock it first (MAAS UI: Take action → Unlock, or POST machines/${machine.system_id}/?op=unlock, by its owner or an admin), then run fix-macs again`,
    };
  }
  const base = { systemId: machine.system_id, hostname: machine.hostname };
  const setMacs = (why: string): MacStep[] => [
    ...items.map((item): MacStep => ({
      subject: machine.hostname,
      action: 'set-mac',
      detail: `${item.interface}: ${item.recorded || '(none)'} → ${item.live} (${why})`,
      params: { ...base, interfaceId: item.interfaceId, interface: item.interface, from: item.recorded, to: item.live },
    })),
    ...childSteps(machine, items, why),
    ...stale.map((c): MacStep => ({
      subject: machine.hostname,
      action: 'set-mac',
      detail: `${c.interface} (${c.type}): ${c.recorded} → ${c.to}: a MAC none of its members has; MAAS gives a ${c.type} its first member's (${why})`,
      params: { ...base, interfaceId: c.interfaceId, interface: c.interface, from: c.recorded, to: c.to },
    })),
  ];
  if (status === NODE_STATUS.NEW && options.maasVersion !== undefined && !versionAtLeast(options.maasVersion, 3, 3)) {
    return {
      refused: `New on MAAS ${options.maasVersion}: before 3.3 MAAS takes no interface edit on a New machine (409), and mark_broken needs an owner a New machine does not have. Delete it in MAAS and let it enlist again from its live MAC, or run fix-macs again once the region runs 3.3 or later`,
    };
  }
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
    const owner = ownerRefusal(machine, apiUser);
    if (owner) return { refused: owner };
    const cannotCommission = options.commissioning ? commissionRefusal(options.commissioning, machine.architecture) : null;
    if (cannotCommission) return { refused: `${name}: ${cannotCommission}` };
    return {
      steps: [
        { subject: machine.hostname, action: 'mark-broken', detail: `${name} → Broken, so that MAAS takes the interface edit`, params: { ...base, status: name, owner: machine.owner as string } },
        ...setMacs('while Broken'),
        {
          subject: machine.hostname,
          action: 'commission',
          detail: `Broken → commissioning, followed until Ready or failed (never left Broken; mark_fixed would make it Ready without a successful commissioning)${preflightNote(options.commissioning)}`,
          params: base,
        },
      ],
    };
  }
  if (RESCUE_FAILED.has(status)) {
    return {
      refused: `${name}: MAAS keeps previous_status Deployed through rescue mode, so mark_broken → mark_fixed would bring it back as Deployed, but mark_fixed clears its recorded OS and MAAS would call it Deployed while it may still be in the rescue environment. Take it out with exit_rescue_mode (MAAS UI: Take action → Exit rescue mode; an admin action), then run fix-macs again: a Deployed machine takes the MAC edit directly`,
    };
  }
  return {
    refused: `${name}: fix-macs does not change machines in this state; update the MAC by hand once the machine is in a state MAAS allows edits in`,
  };
}

function preflightNote(preflight: CommissionPreflight | undefined): string {
  if (preflight?.verdict !== 'can-start') return '';
  return `; MAAS can start it: ${preflight.image} is on every connected rack (${preflight.racks.join(', ')})`;
}

/** mark_broken needs the machine's owner (api/machines.py); commissioning made whoever started it the owner (models/node.py). */
function ownerRefusal(machine: MaasMachine, apiUser: MaasUser | undefined): string | null {
  const name = machine.status_name;
  if (!machine.owner) {
    return `${name} with no owner: MAAS lets only a machine's owner mark it broken (403 otherwise), so its interface cannot be edited. An admin can commission it again in MAAS (allowed from Failed commissioning; it makes that admin the owner); it fails again while the boot MAC is wrong, after which fix-macs can take it through mark_broken with that admin's key`;
  }
  if (!apiUser) {
    return `${name}: the MAAS user behind the API key could not be read (users/?op=whoami), so it is not certain the machine could be marked broken and commissioned again; not starting`;
  }
  if (machine.owner !== apiUser.username) {
    return `${name}, owned by ${machine.owner} (commissioning makes whoever started it the owner): MAAS lets only the owner mark it broken, even for an admin, and the API key is ${apiUser.username}'s. Either set this region's apiKey to ${machine.owner}'s key if ${machine.owner} is a MAAS admin, or have ${machine.owner} mark it broken in MAAS (Take action → Mark broken); fix-macs then updates the MAC of the Broken machine, and you commission it`;
  }
  return null;
}

/**
 * Bonds and bridges keep their own MAC when a member's changes (only a VLAN copies its parent's:
 * models/interface.py). One that carries a repaired member's old MAC is updated to the member's
 * live one, in the same state rule as the member.
 */
function childSteps(machine: MaasMachine, items: MacDriftItem[], why: string): MacStep[] {
  const steps: MacStep[] = [];
  for (const child of machine.interface_set) {
    if (child.type !== 'bond' && child.type !== 'bridge') continue;
    const member = items.find((item) => child.parents?.includes(item.interface) && normaliseMac(child.mac_address) === normaliseMac(item.recorded));
    if (!member) continue;
    steps.push({
      subject: machine.hostname,
      action: 'set-mac',
      detail: `${child.name} (${child.type} over ${child.parents?.join(', ')}): ${child.mac_address} → ${member.live}: it still carries ${member.interface}'s old MAC, and MAAS does not change a ${child.type}'s MAC with its member's (${why})`,
      params: { systemId: machine.system_id, hostname: machine.hostname, interfaceId: child.id, interface: child.name, from: normaliseMac(child.mac_address) ?? child.mac_address, to: member.live },
    });
  }
  return steps;
}

function refusal(machine: MaasMachine, detail: string): StepResult {
  return { subject: machine.hostname, action: 'set-mac', outcome: 'refused', detail };
}

/**
 * Over repair.maxSubjects the repair goes in batches, counted from the current plan: the first reads
 * "Plan 1 of 6: update 50 MACs on 50 machines…; 250 more machines in the next 5 plans", the third
 * "Plan 3 of 6: …", the last "Plan 6 of 6: …".
 */
function batchVerdict(verdict: string, deferred: number, maxSubjects: number, batch: number): string {
  if (!deferred) return batch > 1 ? verdict.replace(/^Plan:/, `Plan ${batch} of ${batch}:`) : verdict;
  const next = Math.ceil(deferred / maxSubjects);
  return `${verdict.replace(/^Plan:/, `Plan ${batch} of ${batch + next}:`)}; ${deferred} more machine${deferred === 1 ? '' : 's'} in the next ${next === 1 ? 'plan' : `${next} plans`} (repair.maxSubjects is ${maxSubjects})`;
}

function planVerdict(site: string, steps: readonly PlanStep[], refusals: readonly StepResult[], checkVerdict: string): string {
  const machines = subjectCount(steps);
  const macs = steps.filter((s) => s.action === 'set-mac').length;
  const cycles = steps.filter((s) => s.action === 'mark-broken').length;
  const broken = new Set(steps.filter((s) => s.action === 'commission').map((s) => s.subject));
  for (const s of steps) if (s.action === 'mark-broken') broken.delete(s.subject);
  const refused = refusals.length ? `; ${refusals.length} machine${refusals.length === 1 ? '' : 's'} left alone (see why)` : '';
  if (!steps.length) return `Nothing to repair at ${site}${refused}: ${checkVerdict}`;
  const via = cycles ? ` (${cycles} through mark_broken → update → commission)` : '';
  const finish = broken.size ? `commission ${broken.size} machine${broken.size === 1 ? '' : 's'} an earlier plan left Broken` : '';
  if (!macs) return `Plan: ${finish} at ${site}${refused}`;
  return `Plan: update ${macs} MAC${macs === 1 ? '' : 's'} on ${machines} machine${machines === 1 ? '' : 's'} at ${site}${via}${finish ? `, and ${finish}` : ''}${refused}`;
}
