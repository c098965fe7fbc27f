import type { HostProbe } from '../checks/macs.ts';
import type { VmHostProbePlan } from '../checks/macs-targets.ts';
import { describeError } from '../errors.ts';
import type { SshSession } from './types.ts';
import { buildDomiflistBatch, splitDomiflistBatch, type DomainProbe } from './virsh.ts';

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

/** Reads every planned domain: one SSH session and ONE remote command per VM host. */
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
    const timeoutMs = options.commandTimeoutMs?.(plan) ?? 15_000 + 250 * plan.queries.length;
    const result = await session.exec(batch.command, { timeoutMs });
    if (result.code === null) return { ok: false, reason: `virsh did not finish within ${Math.round(timeoutMs / 1000)}s` };
    const probes = splitDomiflistBatch(batch, result.stdout);
    const hostFailure = commonFailure(probes, result.stderr);
    if (hostFailure) return { ok: false, reason: hostFailure };
    return { ok: true, domains: new Map(plan.queries.map((q, i) => [q.domain, probes[i] as DomainProbe])) };
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  } finally {
    session.close();
  }
}

/** When no domain could be read at all, the host is the problem (no virsh, no hypervisor, no shell). */
function commonFailure(probes: DomainProbe[], stderr: string): string | null {
  if (!probes.length || probes.some((p) => p.kind !== 'error')) return null;
  const first = probes[0] as Extract<DomainProbe, { kind: 'error' }>;
  const shellError = stderr.trim().split('\n')[0];
  return first.exitCode === null && shellError ? `the remote shell failed: ${shellError}` : first.message;
}

async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
}
