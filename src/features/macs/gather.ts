import type { MacSnapshot } from './evaluate.ts';
import { planVmHostProbes, type VmHostProbePlan } from './vm-host-targets.ts';
import type { SiteConfig } from '../../core/config.ts';
import { requireAdmin, type AdminCommand } from '../../adapters/maas/api-user.ts';
import type { MachineFilter, MaasMachine, PowerParameters } from '../../adapters/maas/types.ts';
import type { Finding } from '../../core/report.ts';
import { applyWitnesses, driftedSystemIds, eventLimitFor, type Read } from './witnesses.ts';
import { describeError } from '../../core/errors.ts';
import { vmHostTarget } from '../../adapters/ssh/targets.ts';
import type { SshTarget } from '../../adapters/ssh/types.ts';
import { probeVmHosts } from './virsh-probe.ts';
import { readLeftBroken } from './left-broken.ts';
import { resolveTarget } from '../../core/targets.ts';
import type { CheckContext } from '../check-spec.ts';

export interface MacDiffOptions {
  /** VM hosts probed at once (default: config `concurrency.vmHosts`, else DEFAULT_CONCURRENCY, 32). */
  concurrency?: number;
  /** Who asks, for the refusal when the API key is not an admin's (default mac-diff). */
  command?: AdminCommand;
}

/**
 * When machines drifted: MAAS's network discovery and the drifted machines' event log, two
 * requests issued together, read-only. Either failing is one info line; the verdict is already made.
 */
export async function withDriftWitnesses(ctx: CheckContext, site: SiteConfig, findings: Finding[]): Promise<Finding[]> {
  const ids = driftedSystemIds(findings);
  if (!ids.length) return findings;
  const maas = ctx.adapters.maas(site.maas);
  const eventLimit = eventLimitFor(ids.length);
  const [discovery, events] = await Promise.all([readOrReason(maas.unknownMacDiscoveries()), readOrReason(maas.queryEvents({ ids, limit: eventLimit }))]);
  // No unknown neighbour: did the racks see none at all (discovery off), or only known MACs? One counted read tells.
  const discoveryTotal = discovery.ok && discovery.value.length === 0 ? await readOrReason(maas.countDiscoveries()) : undefined;
  return applyWitnesses(findings, site.name, { discovery, events, eventLimit, now: new Date(), ...(discoveryTotal ? { discoveryTotal } : {}) });
}

async function readOrReason<T>(promise: Promise<T>): Promise<Read<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  }
}

/**
 * whoami (cached), then two MAAS requests for the whole site (machines, and power parameters in bulk), issued
 * together; then one SSH session and one remote command per VM host, hosts in parallel.
 * fix-macs re-measures through this before it changes anything.
 */
export async function gatherMacSnapshot(ctx: CheckContext, siteName: string, options: MacDiffOptions = {}): Promise<MacSnapshot> {
  const site = resolveTarget(ctx.config, 'site', siteName);
  const maas = ctx.adapters.maas(site.maas);
  // power_parameters is admin-only: a non-admin key is refused here, before any MAAS call or SSH session.
  await requireAdmin(maas, site.maas, options.command ?? 'mac-diff');
  const [machines, allPower] = await Promise.all([maas.listMachines(machineFilter(site)), maas.powerParameters()]);
  const power = virshPowerOf(machines, allPower);
  const plans = planVmHostProbes(machines, power);
  const concurrency = options.concurrency ?? ctx.config.concurrency?.vmHosts;
  const [hosts, leftBroken] = await Promise.all([
    probeVmHosts(plans, {
      ...(concurrency ? { concurrency } : {}),
      connect: (plan) => ctx.adapters.ssh.connect(sshTargetFor(ctx, site, plan)),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    }),
    // Broken machines only: which of them a fix-macs plan left Broken (3.4: from the event log).
    readLeftBroken(maas, machines),
  ]);
  if (leftBroken.unread) ctx.log.warn({ site: siteName, reason: leftBroken.unread.reason, machines: leftBroken.unread.hostnames.length }, 'mac-diff: could not read the event log of the Broken machines; a machine a plan left Broken would not be reported');
  ctx.log.info({ site: siteName, machines: machines.length, vmHosts: plans.length }, 'mac-diff: gathered');
  return { site: siteName, machines, power, hosts, leftBroken };
}

export function machineFilter(site: SiteConfig): MachineFilter {
  const filter: MachineFilter = {};
  if (site.machines.zone) filter.zone = site.machines.zone;
  if (site.machines.pool) filter.pool = site.machines.pool;
  if (site.machines.tags?.length) filter.tags = site.machines.tags;
  return filter;
}

/** Only the site's machines and only the two fields the check reads: power_pass never travels further. */
function virshPowerOf(machines: readonly MaasMachine[], all: Record<string, PowerParameters>): Record<string, PowerParameters> {
  const out: Record<string, PowerParameters> = {};
  for (const m of machines) {
    const p = Object.hasOwn(all, m.system_id) ? all[m.system_id] : undefined;
    if (!p) continue;
    const kept: PowerParameters = {};
    if (typeof p.power_address === 'string') kept.power_address = p.power_address;
    if (typeof p.power_id === 'string') kept.power_id = p.power_id;
    out[m.system_id] = kept;
  }
  return out;
}

/**
 * The configured SSH endpoint for the host (its vmHosts entry, else default, else port 22). A port
 * in MAAS's power_address is honoured only where that entry allows it (names the same port):
 * MAAS data must not choose which port the worker connects to.
 */
function sshTargetFor(ctx: CheckContext, site: SiteConfig, plan: VmHostProbePlan): SshTarget {
  const { host, port, user } = plan.address;
  const target = vmHostTarget(site, host, user);
  if (port !== undefined && port !== target.port) {
    ctx.log.warn({ site: site.name, vmHost: host, powerAddressPort: port, port: target.port }, `power_address names SSH port ${port}, which sites.${site.name}.vmHosts does not allow for ${host}: connecting to port ${target.port}`);
  }
  return target;
}
