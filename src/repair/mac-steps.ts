import { describeError } from '../errors.ts';
import { normaliseMac } from '../mac.ts';
import { MaasApiError } from '../maas/maas-api-error.ts';
import { NODE_STATUS } from '../maas/node-status.ts';
import type { MaasClient } from '../maas/types.ts';
import type { PlanStep, StepOutcome } from '../report.ts';
import { NEVER_MARK_BROKEN } from './mac-states.ts';
import type { StepContext, StepRunner } from './executor.ts';

type Outcome = { outcome: StepOutcome; detail: string };

interface MacParams {
  systemId: string;
  hostname: string;
  status?: string;
  owner?: string;
  interfaceId?: number;
  interface?: string;
  from?: string;
  to?: string;
}

/** fix-macs steps against MAAS: each one reads the machine or interface first and reads back after. */
export function macStepRunner(maas: MaasClient): StepRunner {
  return {
    async run(step, context) {
      const p = paramsOf(step);
      if (step.action === 'mark-broken') return markBroken(maas, p, context);
      if (step.action === 'set-mac') return setMac(maas, p, context);
      if (step.action === 'mark-fixed') return markFixed(maas, p, context);
      return { outcome: 'refused', detail: `unknown fix-macs step "${step.action}"` };
    },
  };
}

async function markBroken(maas: MaasClient, p: MacParams, context: StepContext): Promise<Outcome> {
  const machine = await maas.getMachine(p.systemId);
  if (machine.status === NODE_STATUS.BROKEN) {
    // Sending mark_broken again would overwrite MAAS's previous status with Broken.
    return context.resumed
      ? { outcome: 'verified', detail: 'Broken (the mark_broken sent before the restart took effect; not sent again)' }
      : { outcome: 'refused', detail: `already Broken, not by this plan (planned from ${p.status}): the machine changed; run fix-macs again` };
  }
  if (NEVER_MARK_BROKEN.has(machine.status)) {
    return { outcome: 'refused', detail: `${machine.status_name}: mark_broken would release and power off the machine; never done` };
  }
  if (machine.status_name !== p.status) {
    return { outcome: 'refused', detail: `now ${machine.status_name}, planned from ${p.status}: the machine changed; run fix-macs again` };
  }
  if (!machine.owner || machine.owner !== p.owner) {
    return {
      outcome: 'refused',
      detail: `owned by ${machine.owner || 'nobody'} (planned with ${p.owner}): MAAS lets only the owner mark a machine broken; run fix-macs again, or have the owner do it`,
    };
  }
  try {
    await maas.markBroken(p.systemId, `maas-chatops plan ${context.planId}: to update the boot MAC; mark_fixed follows`);
  } catch (err) {
    if (err instanceof MaasApiError && err.status === 403) {
      return {
        outcome: 'refused',
        detail: `MAAS answered 403 to mark_broken: only the machine's owner (${machine.owner}) may mark it broken, and the API key's user is not; use that user's API key or update the MAC in the MAAS UI`,
      };
    }
    return { outcome: 'failed', detail: `mark_broken: ${describeError(err)}` };
  }
  const after = await maas.getMachine(p.systemId);
  return after.status === NODE_STATUS.BROKEN
    ? { outcome: 'verified', detail: `${p.status} → Broken (read back)` }
    : { outcome: 'failed', detail: `mark_broken answered, but the machine reads back ${after.status_name}` };
}

async function setMac(maas: MaasClient, p: MacParams, context: StepContext): Promise<Outcome> {
  if (p.interfaceId === undefined || !p.to) return { outcome: 'refused', detail: 'the step names no interface or MAC' };
  const to = normaliseMac(p.to);
  if (!to) return { outcome: 'refused', detail: `${p.to} is not a MAC address` };
  const label = `${p.interface || `interface ${p.interfaceId}`}`;
  const before = await maas.getInterface(p.systemId, p.interfaceId);
  const current = normaliseMac(before.mac_address ?? '');
  if (current === to) {
    return { outcome: 'verified', detail: `${label} reads ${to}${context.resumed ? ' (the update sent before the restart took effect)' : ' already'}` };
  }
  if (current !== normaliseMac(p.from ?? '')) {
    return { outcome: 'refused', detail: `${label} now reads ${before.mac_address || '(none)'}, planned from ${p.from}: it changed; run fix-macs again` };
  }
  try {
    await maas.updateInterfaceMac(p.systemId, p.interfaceId, to);
  } catch (err) {
    return { outcome: 'failed', detail: `${label} ${p.from} → ${to}: ${describeError(err)}` };
  }
  const after = await maas.getInterface(p.systemId, p.interfaceId);
  return normaliseMac(after.mac_address ?? '') === to
    ? { outcome: 'verified', detail: `${label}: ${p.from} → ${to} (read back)` }
    : { outcome: 'failed', detail: `${label}: MAAS accepted the update but reads back ${after.mac_address}` };
}

/** A machine we broke must not stay Broken: mark_fixed is tried this often, reading the machine between tries. */
const MARK_FIXED_ATTEMPTS = 3;

async function markFixed(maas: MaasClient, p: MacParams, context: StepContext): Promise<Outcome> {
  const machine = await maas.getMachine(p.systemId);
  if (machine.status !== NODE_STATUS.BROKEN) {
    return context.resumed
      ? { outcome: 'verified', detail: `${machine.status_name} (the mark_fixed sent before the restart took effect)` }
      : { outcome: 'skipped', detail: `${machine.status_name}, not Broken: nothing to mark fixed` };
  }
  let lastError: unknown;
  for (let attempt = 1; attempt <= MARK_FIXED_ATTEMPTS; attempt++) {
    try {
      await maas.markFixed(p.systemId, `maas-chatops plan ${context.planId}: boot MAC updated`);
      lastError = undefined;
      break;
    } catch (err) {
      lastError = err;
      // The POST may have taken effect though its answer was lost: read before sending it again.
      const now = await maas.getMachine(p.systemId).catch(() => undefined);
      if (now && now.status !== NODE_STATUS.BROKEN) return { outcome: 'verified', detail: `Broken → ${now.status_name} (read back after: ${describeError(err)})` };
    }
  }
  if (lastError !== undefined) {
    return { outcome: 'failed', detail: `mark_fixed: ${describeError(lastError)} (${MARK_FIXED_ATTEMPTS} attempts); the machine is still Broken: mark it fixed in MAAS` };
  }
  const after = await maas.getMachine(p.systemId);
  return after.status === NODE_STATUS.BROKEN
    ? { outcome: 'failed', detail: 'mark_fixed answered, but the machine reads back Broken: mark it fixed in MAAS' }
    : { outcome: 'verified', detail: `Broken → ${after.status_name} (read back)` };
}

function paramsOf(step: PlanStep): MacParams {
  const p = step.params ?? {};
  const str = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : undefined);
  const out: MacParams = { systemId: str('systemId') ?? '', hostname: str('hostname') ?? step.subject };
  for (const k of ['status', 'owner', 'interface', 'from', 'to'] as const) {
    const v = str(k);
    if (v !== undefined) out[k] = v;
  }
  if (typeof p.interfaceId === 'number') out.interfaceId = p.interfaceId;
  return out;
}
