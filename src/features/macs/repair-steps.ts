import { formatDuration } from '../../core/duration.ts';
import { describeError } from '../../core/errors.ts';
import { normaliseMac } from '../../core/mac.ts';
import { MaasApiError } from '../../adapters/maas/maas-api-error.ts';
import { NODE_STATUS } from '../../adapters/maas/node-status.ts';
import type { MaasClient, MaasMachine } from '../../adapters/maas/types.ts';
import type { StepOutcome } from '../../core/report.ts';
import type { StepOf } from '../../engine/repair/plan-step.ts';
import { NEVER_MARK_BROKEN } from './machine-states.ts';
import { planMarkComment } from './plan-mark.ts';
import { commissionRefusal, type CommissionPreflight } from './commission-preflight.ts';
import type { StepContext, StepRunner } from '../../engine/repair/executor.ts';
import { lostAnswerNote, sendOrReadBack } from '../../engine/repair/send-or-read-back.ts';
import { followCommissioning, statusMessageOf, type FollowOptions } from '../../engine/repair/follow-commissioning.ts';

type Outcome = { outcome: StepOutcome; detail: string };

type MachineParams = StepOf<'commission'>['params'];

export interface MacStepOptions {
  /** How the commission step follows MAAS (timeout, poll interval, clock). */
  follow?: Omit<FollowOptions, 'onProgress'>;
  /** A line in the plan's thread (or the log) while a step waits on MAAS. */
  progress?: (text: string) => Promise<void> | void;
  /**
   * Asked again right before mark_broken (the plan may have waited for approval): whether MAAS would
   * accept commission now (commission-preflight.ts). Absent: not asked.
   */
  commissionPreflight?: () => Promise<CommissionPreflight>;
}

/** fix-macs steps against MAAS: each one reads the machine or interface first and reads back after. */
export function macStepRunner(maas: MaasClient, given: MacStepOptions = {}): StepRunner {
  // A progress line that cannot be posted never fails the step it describes.
  const options: MacStepOptions = { ...given, progress: async (text) => Promise.resolve(given.progress?.(text)).catch(() => undefined) };
  return {
    async run(step, context) {
      if (step.action === 'mark-broken') return markBroken(maas, step.params, context, options.commissionPreflight);
      if (step.action === 'set-mac') return setMac(maas, step.params, context);
      if (step.action === 'commission') return commission(maas, step.params, context, options);
      if (step.action === 'mark-fixed') return markFixed(maas, step.params, context);
      return { outcome: 'refused', detail: `unknown fix-macs step "${step.action}"` };
    },
  };
}

async function markBroken(maas: MaasClient, p: StepOf<'mark-broken'>['params'], context: StepContext, preflight?: () => Promise<CommissionPreflight>): Promise<Outcome> {
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
  if (machine.locked) {
    return { outcome: 'refused', detail: `locked in MAAS: every edit is refused until it is unlocked (op=unlock, by its owner or an admin); run fix-macs again after` };
  }
  const cannot = preflight ? commissionRefusal(await preflight(), machine.architecture) : null;
  if (cannot) return { outcome: 'refused', detail: `not marked broken, nothing changed: since the plan was made, ${cannot}` };
  try {
    await maas.markBroken(p.systemId, planMarkComment(context.planId));
  } catch (err) {
    if (err instanceof MaasApiError && err.status === 403) {
      return {
        outcome: 'refused',
        detail: `MAAS answered 403 to mark_broken: only the machine's owner (${machine.owner}, who last commissioned it) may mark it broken, and the API key's user is not; see the plan's refusal text for what to do`,
      };
    }
    // Any other error of this non-idempotent op is resolved by reading, never by believing it or resending:
    // MAAS 3.4.10 answered 500 to a mark_broken it had applied (row mark_broken-owner-poweredon[p-allocated]).
    const now = await maas.getMachine(p.systemId).catch(() => undefined);
    if (now?.status === NODE_STATUS.BROKEN) return { outcome: 'verified', detail: `${p.status} → Broken (read back; MAAS answered: ${describeError(err)})` };
    return { outcome: 'failed', detail: `mark_broken: ${describeError(err)}; the machine reads ${now?.status_name ?? 'unreadable'}, not Broken: nothing changed` };
  }
  const after = await maas.getMachine(p.systemId);
  return after.status === NODE_STATUS.BROKEN
    ? { outcome: 'verified', detail: `${p.status} → Broken (read back)` }
    : { outcome: 'failed', detail: `mark_broken answered, but the machine reads back ${after.status_name}` };
}

async function setMac(maas: MaasClient, p: StepOf<'set-mac'>['params'], context: StepContext): Promise<Outcome> {
  if (!p.to) return { outcome: 'refused', detail: 'the step names no interface or MAC' };
  const to = normaliseMac(p.to);
  if (!to) return { outcome: 'refused', detail: `${p.to} is not a MAC address` };
  const label = `${p.interface || `interface ${p.interfaceId}`}`;
  const before = await maas.getInterface(p.systemId, p.interfaceId);
  const current = normaliseMac(before.mac_address ?? '');
  if (current === to) {
    return { outcome: 'verified', detail: `${label} reads ${to}${context.resumed ? ' (the update sent before the restart took effect)' : ' already'}` };
  }
  if (current !== normaliseMac(p.from)) {
    return { outcome: 'refused', detail: `${label} now reads ${before.mac_address || '(none)'}, planned from ${p.from}: it changed; run fix-macs again` };
  }
  const sent = await sendOrReadBack(
    () => maas.updateInterfaceMac(p.systemId, p.interfaceId, to),
    async () => normaliseMac((await maas.getInterface(p.systemId, p.interfaceId)).mac_address ?? '') === to,
  );
  if (sent.kind === 'applied') return { outcome: 'verified', detail: `${label}: ${p.from} → ${to} (${lostAnswerNote(sent.error)})` };
  if (sent.kind === 'failed') return { outcome: 'failed', detail: `${label} ${p.from} → ${to}: ${describeError(sent.error)}` };
  const after = await maas.getInterface(p.systemId, p.interfaceId);
  return normaliseMac(after.mac_address ?? '') === to
    ? { outcome: 'verified', detail: `${label}: ${p.from} → ${to} (read back)` }
    : { outcome: 'failed', detail: `${label}: MAAS accepted the update but reads back ${after.mac_address}` };
}

/** Commissioning runs in these. */
const COMMISSIONING_NOW: ReadonlySet<number> = new Set([NODE_STATUS.COMMISSIONING, NODE_STATUS.TESTING]);

/**
 * Broken → commission → follow until Ready or failed. Journal-safe: a resumed step reads the
 * machine and follows a commissioning that is running (or reports how it ended) instead of
 * sending commission again; only a machine still Broken is commissioned.
 */
async function commission(maas: MaasClient, p: MachineParams, context: StepContext, options: MacStepOptions): Promise<Outcome> {
  const machine = await maas.getMachine(p.systemId);
  if (COMMISSIONING_NOW.has(machine.status)) {
    if (!context.resumed) return { outcome: 'refused', detail: `already ${machine.status_name}, not by this plan: left alone` };
    await options.progress?.(`${p.hostname}: ${machine.status_name} since before the restart; following it (commission is not sent again)`);
    return follow(maas, p, options, 'the commissioning started before the restart');
  }
  if (machine.status !== NODE_STATUS.BROKEN) {
    if (!context.resumed) return { outcome: 'skipped', detail: `${machine.status_name}, not Broken: nothing to commission` };
    return machine.status === NODE_STATUS.READY
      ? { outcome: 'verified', detail: 'Ready (the commissioning started before the restart completed; not sent again)' }
      : { outcome: 'failed', detail: `the commissioning started before the restart ended ${statusMessageOf(machine)}. It is not Broken; update the MAC it PXE-boots from in MAAS and commission it again` };
  }
  const sent = await sendCommission(maas, p);
  if (sent !== true) return sent;
  await options.progress?.(`${p.hostname}: commissioning started (Broken → Commissioning); following it until Ready or failed`);
  return follow(maas, p, options, 'Broken → Commissioning');
}

/** A machine we broke must not stay Broken: commission is tried this often, reading the machine between tries. */
const COMMISSION_ATTEMPTS = 3;

/** POST op=commission; after an error the machine is read, and only a machine still Broken is sent it again. */
async function sendCommission(maas: MaasClient, p: MachineParams): Promise<true | Outcome> {
  let lastError: unknown;
  let now: MaasMachine | undefined;
  for (let attempt = 1; attempt <= COMMISSION_ATTEMPTS; attempt++) {
    try {
      await maas.commission(p.systemId);
      return true;
    } catch (err) {
      lastError = err;
      now = await maas.getMachine(p.systemId).catch(() => undefined);
      if (now && COMMISSIONING_NOW.has(now.status)) return true;
      if (now && now.status !== NODE_STATUS.BROKEN) break;
      // A 4xx is MAAS's considered refusal (no boot images: 400 "Ephemeral operating system … is unavailable."): sending it again changes nothing.
      if (err instanceof MaasApiError && err.status >= 400 && err.status < 500) break;
    }
  }
  const broken = !now || now.status === NODE_STATUS.BROKEN;
  return {
    outcome: 'failed',
    detail: broken
      ? `commission: ${describeError(lastError)}; the machine is still Broken, and mac-diff and fix-macs report it as MAC_LEFT_BROKEN until it is commissioned: once that is dealt with, run fix-macs again (it plans just the commissioning) or commission it in MAAS (Take action → Commission)`
      : `commission: ${describeError(lastError)}; the machine is ${now?.status_name ?? 'unreadable'}: commission it in MAAS (Take action → Commission) once that is dealt with`,
  };
}

async function follow(maas: MaasClient, p: MachineParams, options: MacStepOptions, how: string): Promise<Outcome> {
  const result = await followCommissioning(maas, p.systemId, {
    ...options.follow,
    onProgress: (update) => options.progress?.(update.text),
  });
  const minutes = formatDuration(Math.max(1, result.elapsedMs));
  if (result.outcome === 'ready') return { outcome: 'verified', detail: `${how} → Ready in ${minutes} (read back): MAAS commissioned it` };
  if (result.outcome === 'failed') {
    return {
      outcome: 'failed',
      detail: `commissioning failed again after ${minutes}: ${result.message.replace(/\.+$/, '')}. It is ${result.machine.status_name}, not Broken; check that ${p.hostname} PXE-boots from the MAC MAAS now records, then commission it again in MAAS`,
    };
  }
  const now = result.machine ? `still ${result.machine.status_name}` : `unreadable (${result.lastError ?? 'no answer'})`;
  return {
    outcome: 'failed',
    detail: `${now} after ${minutes} (repair.commissionTimeout): fix-macs stopped following it. MAAS marks it Failed commissioning itself once its node_timeout passes without hearing from the machine; watch it in MAAS, or abort it there (op=abort)`,
  };
}

/** A machine we broke must not stay Broken: mark_fixed is tried this often, reading the machine between tries. */
const MARK_FIXED_ATTEMPTS = 3;

async function markFixed(maas: MaasClient, p: MachineParams, context: StepContext): Promise<Outcome> {
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
