import { lastAppliedHash, recordedIpsOf } from './evaluate.ts';
import { describeError } from '../../core/errors.ts';
import { LAST_APPLIED_DNS_HASH_ANNOTATION } from '../../adapters/kube/capmaas.ts';
import type { KubeClient } from '../../adapters/kube/types.ts';
import type { MaasClient } from '../../adapters/maas/types.ts';
import type { StepOutcome } from '../../core/report.ts';
import type { StepOf } from '../../engine/repair/plan-step.ts';
import { sameIpSet, shortHash } from './repair-planner.ts';
import type { StepContext, StepRunner } from '../../engine/repair/executor.ts';
import { lostAnswerNote, sendOrReadBack } from '../../engine/repair/send-or-read-back.ts';

type Outcome = { outcome: StepOutcome; detail: string };

/** fix-dns steps: the record in MAAS, then the controller's hash cache on the MaasCluster; each read back. */
export function dnsStepRunner(maas: MaasClient, kube: KubeClient): StepRunner {
  return {
    async run(step, context) {
      if (step.action === 'set-dns-ips') return setIps(maas, step, context);
      if (step.action === 'set-dns-hash') return setHash(kube, step, context);
      return { outcome: 'refused', detail: `unknown fix-dns step "${step.action}"` };
    },
  };
}

async function setIps(maas: MaasClient, step: StepOf<'set-dns-ips'>, context: StepContext): Promise<Outcome> {
  const { resourceId: id } = step.params;
  const to = nonEmpty(step.params.to);
  const from = nonEmpty(step.params.from);
  if (to.length === 0) return { outcome: 'refused', detail: 'refused: an empty set is never written (it would wipe the record)' };
  const current = recordedIpsOf(await maas.getDnsResource(id));
  if (sameIpSet(current, to)) {
    return { outcome: 'verified', detail: `resource ${id} holds ${to.join(', ')}${context.resumed ? ' (the update sent before the restart took effect)' : ' already'}` };
  }
  if (!sameIpSet(current, from)) {
    return { outcome: 'refused', detail: `resource ${id} now holds ${current.join(', ') || '(empty)'}, planned from ${from.join(', ') || '(empty)'}: it changed; run fix-dns again` };
  }
  const sent = await sendOrReadBack(() => maas.updateDnsResourceIps(id, to), async () => sameIpSet(recordedIpsOf(await maas.getDnsResource(id)), to));
  if (sent.kind === 'applied') return { outcome: 'verified', detail: `resource ${id}: ${from.join(', ') || '(empty)'} → ${to.join(', ')} (${lostAnswerNote(sent.error)})` };
  if (sent.kind === 'failed') return { outcome: 'failed', detail: `PUT dnsresources/${id}/: ${describeError(sent.error)}` };
  const after = recordedIpsOf(await maas.getDnsResource(id));
  return sameIpSet(after, to)
    ? { outcome: 'verified', detail: `resource ${id}: ${from.join(', ') || '(empty)'} → ${to.join(', ')} (read back)` }
    : { outcome: 'failed', detail: `resource ${id}: MAAS accepted the update but reads back ${after.join(', ') || '(empty)'}` };
}

async function setHash(kube: KubeClient, step: StepOf<'set-dns-hash'>, context: StepContext): Promise<Outcome> {
  const { namespace, maasCluster, to, from } = step.params;
  const where = `MaasCluster ${namespace}/${maasCluster}`;
  const before = await kube.getMaasCluster(namespace, maasCluster);
  if (!before) return { outcome: 'failed', detail: `${where} no longer exists` };
  const current = lastAppliedHash(before);
  if (current === to) return { outcome: 'verified', detail: `${where} annotation is ${to.slice(0, 12)}…${context.resumed ? '' : ' already'}` };
  if (current !== from) {
    return { outcome: 'refused', detail: `${where} annotation is now ${current ?? '(absent)'}, planned from ${from ?? '(absent)'}: the controller moved on; run fix-dns again` };
  }
  const holdsTarget = async () => {
    const now = await kube.getMaasCluster(namespace, maasCluster);
    return now !== null && lastAppliedHash(now) === to;
  };
  const sent = await sendOrReadBack(() => kube.setMaasClusterAnnotation(namespace, maasCluster, LAST_APPLIED_DNS_HASH_ANNOTATION, to), holdsTarget);
  if (sent.kind === 'applied') return { outcome: 'verified', detail: `${where} ${LAST_APPLIED_DNS_HASH_ANNOTATION}: ${shortHash(from)} → ${shortHash(to)} (${lostAnswerNote(sent.error)})` };
  if (sent.kind === 'failed') return { outcome: 'failed', detail: `annotating ${where}: ${describeError(sent.error)}` };
  const after = await kube.getMaasCluster(namespace, maasCluster);
  const read = after ? lastAppliedHash(after) : null;
  return read === to
    ? { outcome: 'verified', detail: `${where} ${LAST_APPLIED_DNS_HASH_ANNOTATION}: ${shortHash(from)} → ${shortHash(to)} (read back)` }
    : { outcome: 'failed', detail: `${where}: the patch was accepted but the annotation reads back ${read ?? '(absent)'}` };
}

function nonEmpty(ips: readonly string[]): string[] {
  return ips.filter((ip) => ip !== '');
}
