import type { HostProbe } from './evaluate.ts';
import type { VmHostProbePlan } from './vm-host-targets.ts';
import { describeError } from '../../core/errors.ts';
import { forEachLimited } from '../../core/for-each-limited.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';
import { buildDomiflistBatch, splitDomiflistBatch, type DomainProbe } from '../../adapters/ssh/virsh.ts';

/** Hosts probed at once: a site's hosts in one wave, while hundreds of hosts do not open hundreds of sockets. */
export const DEFAULT_CONCURRENCY = 32;

export interface VmHostProbeOptions {
  /** VM hosts probed at once (default 32). */
  concurrency?: number;
  /** Opens the pinned session for a host; a throw makes the host unreachable with that reason. */
  connect(plan: VmHostProbePlan): Promise<SshSession>;
  /** Per-host command timeout; default 15 s plus 250 ms per domain. */
  commandTimeoutMs?(plan: VmHostProbePlan): number;
  signal?: AbortSignal;
}

/** Reads every planned domain: one SSH session, ONE remote command and ONE virsh process per VM host. */
export async function probeVmHosts(plans: readonly VmHostProbePlan[], options: VmHostProbeOptions): Promise<Record<string, HostProbe>> {
  const results: Record<string, HostProbe> = {};
  await forEachLimited(plans, options.concurrency ?? DEFAULT_CONCURRENCY, async (plan) => {
    if (options.signal?.aborted) {
      results[plan.vmHost] = { ok: false, reason: 'the job was cancelled before this host was read' };
      return;
    }
    results[plan.vmHost] = await probeOne(plan, options);
  });
  return results;
}

async function probeOne(plan: VmHostProbePlan, options: VmHostProbeOptions): Promise<HostProbe> {
  let session: SshSession;
  try {
    session = await options.connect(plan);
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  }
  try {
    const batch = buildDomiflistBatch(plan.queries);
    const timeoutMs = options.commandTimeoutMs?.(plan) ?? 15_000 + 50 * plan.queries.length;
    const outputs = [];
    for (const command of batch.commands) {
      const result = await session.exec(command, { timeoutMs });
      if (result.code === null) return { ok: false, reason: `virsh did not finish within ${Math.round(timeoutMs / 1000)}s` };
      outputs.push(result);
    }
    const { domains, listed, hostFailure } = splitDomiflistBatch(batch, outputs);
    if (hostFailure) return { ok: false, reason: hostFailure };
    const probes = new Map(plan.queries.map((q, i) => [q.domain, domains[i] as DomainProbe]));
    return listed ? { ok: true, domains: probes, listed } : { ok: true, domains: probes };
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  } finally {
    session.close();
  }
}
