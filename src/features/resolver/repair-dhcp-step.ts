import { setTimeout as sleep } from 'node:timers/promises';
import type { Adapters } from '../../adapters/adapters.ts';
import type { RackConfig, SiteConfig } from '../../core/config.ts';
import { notReadReason, readRackDhcp, sourceOf, type DhcpObservation } from '../dhcpd-conf/index.ts';
import { describeError } from '../../core/errors.ts';
import { versionAtLeast } from '../../adapters/maas/maas-version.ts';
import type { IpRange } from '../../adapters/maas/types.ts';
import type { StepOutcome } from '../../core/report.ts';
import type { StepOf } from '../../engine/repair/plan-step.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';

type Outcome = { outcome: StepOutcome; detail: string };

export interface DhcpStepOptions {
  /** How long to wait for the rack's dhcpd.conf to show the new servers after MAAS was asked to rewrite it (default 60 s). */
  dhcpWaitMs?: number;
  /** The pause between two reads of the file (default 2 s). */
  dhcpPollMs?: number;
}

function shown(servers: string[]): string {
  return servers.join(', ') || '(none)';
}

function subnetIdOf(range: IpRange): number | undefined {
  return typeof range.subnet === 'number' ? range.subnet : range.subnet?.id;
}

/** The file hands out `expect`, and no running dhcpd predates it. */
function serves(read: DhcpObservation, expect: string[]): boolean {
  return read.outcome === 'read' && read.servers.join(' ') === expect.join(' ') && read.serving.loaded !== false;
}

/** Reads the file until it hands out `expect`, or the wait is over; the last reading either way. */
async function readUntil(session: SshSession, rack: RackConfig, site: string, cidr: string, expect: string[], waitMs: number, pollMs: number): Promise<DhcpObservation> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const read = await readRackDhcp(session, rack, site, cidr);
    if (read.outcome !== 'read' || serves(read, expect) || Date.now() + pollMs > deadline) return read;
    await sleep(pollMs);
  }
}

function manualStep(cidr: string, range: IpRange | undefined, path: string): string {
  const rangeStep = range
    ? `re-save IP range ${range.id} (${range.start_ip}-${range.end_ip}) unchanged: \`maas <profile> iprange update ${range.id} comment='${range.comment ?? ''}'\`, or in the UI Subnets → ${cidr} → Reserved ranges → edit → Save`
    : `re-save one of subnet ${cidr}'s IP ranges unchanged (\`maas <profile> iprange update <id> comment=<its comment>\`)`;
  return `By hand: ${rangeStep}; MAAS then runs configure-dhcp, which rewrites ${path} and restarts dhcpd on the racks of that VLAN. Then read \`option domain-name-servers\` in ${path} on the rack.`;
}

/**
 * After set-subnet-dns: make the rack's dhcpd really hand out the new servers. MAAS up to 3.6
 * rewrites dhcpd.conf by itself after the subnet edit (database trigger sys_dhcp_subnet_update);
 * from 3.7 nothing does (models/signals/subnet.py watches vlan_id only). What does is saving an IP
 * range of the subnet: IPRange.save starts configure-dhcp whenever the VLAN has DHCP on, changed or
 * not (models/iprange.py), which rewrites the file and restarts dhcpd (maastemporalworker/workflow/dhcp.py,
 * full_reload for ip_range_ids). So: read; before 3.7 wait (bounded) for MAAS's own rewrite; if still
 * stale, re-save the subnet's range unchanged; read again.
 */
export async function settleRackDhcp(site: SiteConfig, rack: RackConfig, adapters: Adapters, step: StepOf<'check-dhcp'>, options: DhcpStepOptions = {}): Promise<Outcome> {
  const { cidr, subnetId, expect } = step.params;
  if (!expect.length) return { outcome: 'refused', detail: 'the step names no subnet or servers' };
  const waitMs = options.dhcpWaitMs ?? 60_000;
  const pollMs = options.dhcpPollMs ?? 2_000;
  const session = await adapters.ssh.connect(rackTarget(site));
  try {
    const first = await readRackDhcp(session, rack, site.name, cidr);
    if (first.outcome !== 'read') return { outcome: 'failed', detail: `DHCP option 6 could not be read: ${notReadReason(first)}` };
    if (serves(first, expect)) {
      return { outcome: 'verified', detail: `${first.path} on ${session.host} hands nodes on ${cidr} option 6: ${shown(first.servers)} (MAAS rewrote it after the subnet edit)` };
    }
    const was =
      first.servers.join(' ') === expect.join(' ')
        ? `${first.path} reads ${shown(first.servers)}, but the running dhcpd started before it was written`
        : `${first.path} still hands out ${shown(first.servers)} (${sourceOf(first)})`;
    const maas = adapters.maas(site.maas);
    const version = await maas.version().then((v) => v.version, () => undefined);
    if (version !== undefined && !versionAtLeast(version, 3, 7)) {
      const settled = await readUntil(session, rack, site.name, cidr, expect, waitMs, pollMs);
      if (settled.outcome === 'read' && serves(settled, expect)) {
        return { outcome: 'verified', detail: `${settled.path} on ${session.host} hands nodes on ${cidr} option 6: ${shown(settled.servers)} (MAAS ${version} rewrote it after the subnet edit)` };
      }
    }
    let range: IpRange | undefined;
    try {
      const ranges = (await maas.listIpRanges()).filter((r) => subnetIdOf(r) === subnetId);
      range = ranges.sort((a, b) => Number(b.type === 'dynamic') - Number(a.type === 'dynamic') || a.id - b.id)[0];
    } catch (err) {
      return { outcome: 'failed', detail: `${was}; GET ipranges/: ${describeError(err)}. ${manualStep(cidr, undefined, first.path)}` };
    }
    if (!range) {
      return { outcome: 'failed', detail: `${was}, and subnet ${cidr} has no IP range whose save would have MAAS rewrite it. ${manualStep(cidr, undefined, first.path)}` };
    }
    try {
      await maas.resaveIpRange(range.id, range.comment ?? '');
    } catch (err) {
      return { outcome: 'failed', detail: `${was}; re-saving IP range ${range.id}: ${describeError(err)}. ${manualStep(cidr, range, first.path)}` };
    }
    const after = await readUntil(session, rack, site.name, cidr, expect, waitMs, pollMs);
    if (after.outcome === 'read' && serves(after, expect)) {
      return {
        outcome: 'verified',
        detail: `${first.path} handed out ${shown(first.servers)} after the subnet edit; re-saved IP range ${range.id} unchanged (MAAS 3.7+ rewrites dhcpd.conf on an IP range save, not on a subnet edit): now ${shown(after.servers)}`,
      };
    }
    const now = after.outcome === 'read' ? `${shown(after.servers)} (${sourceOf(after)})` : notReadReason(after);
    return { outcome: 'failed', detail: `re-saved IP range ${range.id}, but after ${Math.round(waitMs / 1000)}s ${first.path} still reads ${now}, not ${shown(expect)}. ${manualStep(cidr, range, first.path)}` };
  } finally {
    session.close();
  }
}
