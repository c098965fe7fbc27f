/**
 * fix-resolver's canary: after the subnet change, commission one machine (rack.canary) and follow
 * it to Ready or failure. It proves the change end to end: a commissioning PXE-boots, takes DHCP
 * (option 6 included) and reaches MAAS through the resolver the change set up. A step of the plan,
 * approved with the rest; a failure leaves the subnet change in place and is never retried.
 */
import { describeError } from '../../core/errors.ts';
import { NODE_STATUS } from '../../adapters/maas/node-status.ts';
import type { MaasClient, MaasMachine } from '../../adapters/maas/types.ts';
import type { StepResult } from '../../core/report.ts';
import type { StepOf } from '../../engine/repair/plan-step.ts';
import type { StepContext } from '../../engine/repair/executor.ts';
import { followCommissioning, statusMessageOf, type FollowOptions } from '../../engine/repair/follow-commissioning.ts';

export const CANARY_STEP = 'commission-canary';

type CanaryStep = StepOf<typeof CANARY_STEP>;

/** MAAS commissions from these only (node_action.py Commission.actionable_statuses). */
const COMMISSIONABLE: ReadonlySet<number> = new Set([NODE_STATUS.NEW, NODE_STATUS.READY, NODE_STATUS.BROKEN, NODE_STATUS.FAILED_COMMISSIONING]);
/** Commissioning these would take down what runs on them: refused by name. */
const IN_USE: ReadonlySet<number> = new Set([NODE_STATUS.DEPLOYED, NODE_STATUS.DEPLOYING, NODE_STATUS.ALLOCATED]);
const RUNNING: ReadonlySet<number> = new Set([NODE_STATUS.COMMISSIONING, NODE_STATUS.TESTING]);

/** What the planner learned about rack.canary: the machine MAAS lists under that hostname, or why not. */
export type CanaryLookup = { hostname: string; machines: MaasMachine[] } | { hostname: string; error: string };

/** Looks the canary up by hostname: one `GET machines/?hostname=` request. */
export async function lookUpCanary(maas: MaasClient, hostname: string): Promise<CanaryLookup> {
  try {
    return { hostname, machines: (await maas.listMachines({ hostname: [hostname] })).filter((m) => m.hostname === hostname) };
  } catch (err) {
    return { hostname, error: describeError(err) };
  }
}

/** The canary's plan step, or its refusal (the rest of the plan stands either way). Pure. */
export function canaryStep(site: string, lookup: CanaryLookup): { step: CanaryStep } | { refusal: StepResult } {
  const subject = `canary ${lookup.hostname}`;
  const refuse = (detail: string) => ({ refusal: { subject, action: CANARY_STEP, outcome: 'refused' as const, detail } });
  if ('error' in lookup) return refuse(`the canary ${lookup.hostname} could not be looked up in MAAS (${lookup.error}): no canary will run`);
  const [machine, ...more] = lookup.machines;
  if (!machine) return refuse(`no machine named ${lookup.hostname} in MAAS (sites.${site}.rack.canary): no canary will run`);
  if (more.length) return refuse(`${lookup.machines.length} machines are named ${lookup.hostname} in MAAS: no canary will run`);
  const why = refusalOf(machine);
  if (why) return refuse(why);
  return {
    step: {
      subject,
      action: CANARY_STEP,
      detail: `after the subnet change: commission ${machine.hostname} (${machine.system_id}, now ${machine.status_name}) and follow it to Ready or failure; progress in the thread; a failure leaves the subnet change in place and is reported, never retried`,
      params: { site, systemId: machine.system_id, hostname: machine.hostname },
    },
  };
}

function refusalOf(machine: MaasMachine): string | null {
  const name = `${machine.hostname} (${machine.system_id})`;
  if (machine.locked) return `the canary ${name} is locked in MAAS: it is never commissioned; unlock it or name another machine as rack.canary`;
  if (IN_USE.has(machine.status)) return `the canary ${name} is ${machine.status_name}: commissioning would wipe what runs on it; name a Ready or New machine as rack.canary`;
  if (!COMMISSIONABLE.has(machine.status)) return `the canary ${name} is ${machine.status_name}: MAAS commissions only New, Ready, Broken or Failed commissioning machines`;
  return null;
}

export type CanaryRunOptions = Pick<FollowOptions, 'timeoutMs' | 'pollMs' | 'now' | 'sleep' | 'signal'> & {
  /** A line for the plan's thread (or the log) while the canary commissions. */
  progress?: (text: string) => Promise<void>;
};

/** The executor's step: commission once (never twice for one plan), follow, report. */
export async function runCanary(maas: MaasClient, step: CanaryStep, context: StepContext, options: CanaryRunOptions = {}): Promise<{ outcome: 'verified' | 'failed' | 'refused'; detail: string }> {
  const { systemId, hostname } = step.params;
  const before = await maas.getMachine(systemId);
  if (before.hostname !== hostname) return { outcome: 'refused', detail: `${systemId} is now ${before.hostname}, planned as ${hostname}: not commissioned` };
  const progress = (text: string) => options.progress?.(`Canary ${text}`) ?? Promise.resolve();
  const alreadyRunning = context.resumed && RUNNING.has(before.status);
  if (context.resumed && !alreadyRunning) {
    // The journal says commissioning was asked for before a restart: report where it ended, never commission again.
    if (before.status === NODE_STATUS.READY) {
      return {
        outcome: 'failed',
        detail: `canary ${hostname} is Ready, but whether the commissioning asked for before a restart ran is not known; it is not commissioned a second time for one plan: commission it by hand to try the resolver`,
      };
    }
    return { outcome: 'failed', detail: `canary ${hostname} is ${statusMessageOf(before)} after a restart: it is not commissioned again; the subnet change stays in place` };
  }
  if (!alreadyRunning) {
    const why = refusalOf(before);
    if (why) return { outcome: 'refused', detail: `${why} (it changed since the plan)` };
    try {
      await maas.commission(systemId);
    } catch (err) {
      return { outcome: 'failed', detail: `commissioning ${hostname} was refused by MAAS (${describeError(err)}); the subnet change stays in place` };
    }
    await progress(`${hostname}: commissioning started (${systemId})`);
  }
  const { progress: _line, ...follow } = options;
  const result = await followCommissioning(maas, systemId, { ...follow, onProgress: (p) => progress(p.text) });
  const minutes = `${Math.max(1, Math.round(result.elapsedMs / 60_000))} min`;
  if (result.outcome === 'ready') {
    return { outcome: 'verified', detail: `canary ${hostname} commissioned: Ready within ${minutes}; a new boot got DHCP and reached MAAS through the changed resolver` };
  }
  if (result.outcome === 'failed') {
    return { outcome: 'failed', detail: `canary ${hostname} did not commission: ${result.message.replace(/\.$/, '')}. The subnet change stays in place and nothing is retried; look at ${hostname}'s commissioning output in MAAS` };
  }
  const where = result.machine ? `still ${result.machine.status_name}` : `unreadable (${result.lastError ?? 'no answer'})`;
  return { outcome: 'failed', detail: `canary ${hostname} ${where} after ${minutes}: stopped following it (MAAS keeps commissioning); the subnet change stays in place` };
}
