import type { MaasClient } from '../../adapters/maas/types.ts';
import { vmHostTarget } from '../../adapters/ssh/targets.ts';
import type { SshTarget } from '../../adapters/ssh/types.ts';
import type { SiteConfig } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import { machineFilter } from './gather.ts';
import { planVmHostProbes } from './vm-host-targets.ts';

/** One VM host of a site to watch: where to SSH, and which libvirt URI to listen on there. */
export type WatchedVmHost =
  | { vmHost: string; uri: string; target: SshTarget }
  /** Its SSH settings are incomplete (no user, no key): the reason, to say once and not retry. */
  | { vmHost: string; uri: string; problem: string };

/**
 * The VM hosts mac-diff would read for the site: those its virsh machines' power_address names
 * (the same two MAAS requests a mac-diff starts with), each with its configured SSH endpoint.
 * A port in power_address is not honoured: MAAS data does not choose where the worker connects.
 */
export async function watchedVmHosts(maas: MaasClient, site: SiteConfig): Promise<WatchedVmHost[]> {
  const [machines, power] = await Promise.all([maas.listMachines(machineFilter(site)), maas.powerParameters()]);
  return planVmHostProbes(machines, power).map((plan) => {
    const uri = plan.address.localUri;
    try {
      return { vmHost: plan.vmHost, uri, target: vmHostTarget(site, plan.address.host, plan.address.user) };
    } catch (err) {
      return { vmHost: plan.vmHost, uri, problem: describeError(err) };
    }
  });
}
