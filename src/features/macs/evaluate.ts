import { normaliseMac } from '../../core/mac.ts';
import type { MaasMachine, PowerParameters } from '../../adapters/maas/types.ts';
import type { Finding, Severity } from '../../core/report.ts';
import type { DomainProbe } from '../../adapters/ssh/virsh.ts';
import { pairInterfaces, recordedInterfaces, type Pairing } from './pairing.ts';
import { staleChildFindings } from './stale-children.ts';
import { macSummary, type MacRow } from './summary.ts';
import { machineTarget } from './vm-host-targets.ts';
import type { LeftBroken, LeftBrokenRead } from './left-broken.ts';

/** What one VM host gave back: every domain it was asked about, or why it could not be read. */
export type HostProbe =
  /** `listed`: the host's `virsh list --all --name`, read in the same virsh process. */
  | { ok: true; domains: Map<string, DomainProbe>; listed?: string[] }
  | { ok: false; reason: string };

/** Everything the check needs, gathered by the job: MAAS's view and the VM hosts' view. */
export interface MacSnapshot {
  site: string;
  /** Every machine MAAS listed for the site (also the haystack for MAC_IN_USE). */
  machines: MaasMachine[];
  /** `op=power_parameters`, by system id. */
  power: Record<string, PowerParameters>;
  /** By VM host key (host, or host:port), as planVmHostProbes names them. */
  hosts: Record<string, HostProbe>;
  /** Broken machines a fix-macs plan marked broken (left-broken.ts); absent: not read. */
  leftBroken?: LeftBrokenRead;
}

export interface MacEvaluation {
  verdict: string;
  findings: Finding[];
}

/*
 * Severities: MAC_DRIFT and MAC_IN_USE critical (PXE reaches MAAS as an unknown node; a repair
 * would be refused); MAC_AMBIGUOUS critical when the boot interface is among the unpaired, else
 * warning; MAC_DOMAIN_MISSING critical (MAAS cannot power the machine at all);
 * MAC_HOST_UNREACHABLE and PROBE_FAILED error (machines unchecked); MAC_NOT_VIRSH and
 * MAC_SUMMARY info.
 */
export function evaluateMacs(snapshot: MacSnapshot): MacEvaluation {
  const { site, machines } = snapshot;
  const owners = macOwners(machines);
  const findings: Finding[] = [];
  const rows: MacRow[] = [];
  const liveByDomain = new Map<string, string[]>();
  const drifted = new Set<string>();
  const unchecked = new Map<string, string[]>();
  const unreachableHosts = new Map<string, { reason: string; machines: MaasMachine[] }>();
  let missing = 0;
  let checked = 0;
  let notVirshCount = 0;

  for (const machine of machines) {
    const target = machineTarget(machine, snapshot.power[machine.system_id]);
    if (target.kind === 'not-virsh') {
      findings.push(notVirsh(machine, target.powerType));
      notVirshCount += 1;
      continue;
    }
    if (target.kind === 'bad-power') {
      findings.push(badPower(machine, target.reason));
      rows.push(row(machine, '', '', 'no power address', target.reason));
      addTo(unchecked, 'bad power parameters', machine.hostname);
      continue;
    }
    const { vmHost, domain } = target;
    const host = snapshot.hosts[vmHost];
    if (!host || !host.ok) {
      const reason = host ? host.reason : 'not probed';
      const entry = unreachableHosts.get(vmHost) ?? { reason, machines: [] };
      entry.machines.push(machine);
      unreachableHosts.set(vmHost, entry);
      rows.push(row(machine, vmHost, domain, 'unreachable', reason));
      addTo(unchecked, `VM host ${vmHost} unreachable`, machine.hostname);
      continue;
    }
    const probe = host.domains.get(domain);
    if (!probe || probe.kind === 'error') {
      const reason = probe ? probe.message : 'the VM host did not report this domain';
      findings.push(domainError(machine, vmHost, domain, reason));
      rows.push(row(machine, vmHost, domain, 'error', reason));
      addTo(unchecked, `virsh failed on ${vmHost}`, machine.hostname);
      continue;
    }
    if (probe.kind === 'missing') {
      missing += 1;
      findings.push(domainMissing(machine, vmHost, domain, site, host.listed));
      rows.push(row(machine, vmHost, domain, 'no such domain', ''));
      continue;
    }
    checked += 1;
    liveByDomain.set(domain, probe.nics.map((n) => n.mac));
    const pairing = pairInterfaces(machine, probe.nics);
    const machineFindings = pairingFindings(site, machine, vmHost, domain, pairing, owners);
    findings.push(...machineFindings);
    // Only when the members match: a drifted member's bond is planned with the member.
    if (!pairing.drifted.length && !pairing.ambiguous) findings.push(...staleChildFindings(site, machine, probe.nics.map((n) => n.mac)));
    if (pairing.drifted.length || pairing.ambiguous) drifted.add(machine.system_id);
    rows.push(...pairingRows(machine, vmHost, domain, pairing));
  }
  for (const [vmHost, entry] of unreachableHosts) findings.push(hostUnreachable(vmHost, entry.reason, entry.machines));
  const leftBroken = snapshot.leftBroken?.found ?? [];
  findings.push(...leftBroken.map((entry) => leftBrokenFinding(site, entry)));

  const unread = snapshot.leftBroken?.unread;
  if (unread) unchecked.set(`whether a fix-macs plan left them Broken: the event log could not be read, ${unread.reason}`, unread.hostnames);
  const verdict = verdictOf({ site, total: machines.length, drifted: drifted.size, checked, missing, notVirsh: notVirshCount, unchecked, leftBroken: leftBroken.length });
  if (checked > 0 || rows.length > 0) findings.push(macSummary({ site, rows, liveByDomain, anyDrift: drifted.size > 0 }));
  return { verdict, findings };
}

function pairingFindings(
  site: string,
  machine: MaasMachine,
  vmHost: string,
  domain: string,
  pairing: Pairing,
  owners: Map<string, MaasMachine[]>,
): Finding[] {
  const out: Finding[] = [];
  const base = { systemId: machine.system_id, hostname: machine.hostname, status: machine.status_name, vmHost, domain };
  for (const { iface, live } of pairing.drifted) {
    const boot = iface.id === machine.boot_interface?.id;
    out.push({
      code: 'MAC_DRIFT',
      severity: 'critical',
      subject: machine.hostname,
      summary:
        `${machine.hostname} (${machine.status_name}): MAAS records ${iface.name} as ${iface.mac_address || '(none)'}, ` +
        `the live domain has ${live.mac}` + (boot ? ': PXE from it reaches MAAS as an unknown node' : ''),
      evidence: { ...base, interface: iface.name, interfaceId: iface.id, boot, recorded: iface.mac_address, live: live.mac, liveInterface: live.interface },
      fix: `/maas fix-macs ${site}`,
    });
    const other = (owners.get(live.mac) ?? []).find((m) => m.system_id !== machine.system_id);
    if (other) {
      out.push({
        code: 'MAC_IN_USE',
        severity: 'critical',
        subject: machine.hostname,
        summary: `${machine.hostname}: live MAC ${live.mac} is already recorded on ${other.hostname} (${other.system_id}); MAAS will refuse to move it`,
        evidence: { systemId: machine.system_id, hostname: machine.hostname, interface: iface.name, live: live.mac, otherSystemId: other.system_id, otherHostname: other.hostname },
        fix: `Check whether ${other.hostname} is a stale duplicate of this VM (its power_id, its own domain's MACs); delete it or its interface in MAAS, then /maas fix-macs ${site}`,
      });
    }
  }
  if (pairing.ambiguous) {
    const { recorded, live, reason } = pairing.ambiguous;
    const bootUnpaired = recorded.some((i) => i.id === machine.boot_interface?.id);
    const severity: Severity = bootUnpaired ? 'critical' : 'warning';
    out.push({
      code: 'MAC_AMBIGUOUS',
      severity,
      subject: machine.hostname,
      summary: `${machine.hostname} (${machine.status_name}): recorded and live MACs differ and cannot be paired safely (${reason})`,
      evidence: {
        ...base,
        reason,
        recorded: recorded.map((i) => ({ interface: i.name, interfaceId: i.id, mac: i.mac_address })),
        live: live.map((n) => ({ interface: n.interface, mac: n.mac })),
        allLive: pairing.matched.map((p) => p.live.mac).concat(live.map((n) => n.mac)),
      },
      fix: `Compare \`virsh domiflist ${domain}\` on ${vmHost} with the machine's interfaces in MAAS and update them by hand; /maas fix-macs will not guess`,
    });
  }
  return out;
}

function macOwners(machines: readonly MaasMachine[]): Map<string, MaasMachine[]> {
  const owners = new Map<string, MaasMachine[]>();
  for (const machine of machines) {
    for (const iface of machine.interface_set) {
      const mac = normaliseMac(iface.mac_address ?? '');
      if (!mac) continue;
      const list = owners.get(mac) ?? [];
      if (!list.includes(machine)) list.push(machine);
      owners.set(mac, list);
    }
  }
  return owners;
}

function notVirsh(machine: MaasMachine, powerType: string): Finding {
  return {
    code: 'MAC_NOT_VIRSH',
    severity: 'info',
    subject: machine.hostname,
    summary: `${machine.hostname} is powered by ${powerType}, not virsh: its MACs are not checked`,
    evidence: { systemId: machine.system_id, hostname: machine.hostname, powerType },
  };
}

function badPower(machine: MaasMachine, reason: string): Finding {
  return {
    code: 'PROBE_FAILED',
    severity: 'error',
    subject: machine.hostname,
    summary: `Could not check ${machine.hostname}: ${reason}`,
    evidence: { systemId: machine.system_id, hostname: machine.hostname, reason },
    fix: `Set the machine's power parameters in MAAS (power_address qemu+ssh://user@host/system, power_id the libvirt domain)`,
  };
}

function domainError(machine: MaasMachine, vmHost: string, domain: string, reason: string): Finding {
  return {
    code: 'PROBE_FAILED',
    severity: 'error',
    subject: machine.hostname,
    summary: `Could not read ${machine.hostname}'s domain on ${vmHost}: ${reason}`,
    evidence: { systemId: machine.system_id, hostname: machine.hostname, vmHost, domain, reason },
    fix: `Run \`virsh domiflist ${domain}\` on ${vmHost} as the configured user and fix what it reports`,
  };
}

function domainMissing(machine: MaasMachine, vmHost: string, domain: string, site: string, listed?: string[]): Finding {
  const otherCase = listed?.filter((name) => name !== domain && name.toLowerCase() === domain.toLowerCase()) ?? [];
  const hostList = listed ? { domainsOnHost: listed.length, ...(otherCase.length ? { sameNameOtherCase: otherCase } : {}) } : {};
  return {
    code: 'MAC_DOMAIN_MISSING',
    severity: 'critical',
    subject: machine.hostname,
    summary: `${machine.hostname} (${machine.status_name}): power_id ${JSON.stringify(domain)} names no domain on ${vmHost}; MAAS cannot power it`,
    evidence: { systemId: machine.system_id, hostname: machine.hostname, status: machine.status_name, vmHost, domain, ...hostList },
    fix: `Find the VM with \`virsh list --all\` on ${vmHost}, then correct the machine's power_id in MAAS (or delete the machine if the VM is gone); re-run /maas mac-diff ${site}`,
  };
}

function hostUnreachable(vmHost: string, reason: string, machines: MaasMachine[]): Finding {
  return {
    code: 'MAC_HOST_UNREACHABLE',
    severity: 'error',
    subject: vmHost,
    summary: `VM host ${vmHost} could not be read (${reason}); its ${machines.length} machine${machines.length === 1 ? ' is' : 's are'} unchecked`,
    evidence: { vmHost, reason, machines: machines.map((m) => m.hostname), systemIds: machines.map((m) => m.system_id) },
    fix: `Check that ${vmHost} is up and that the bot's SSH key and pinned host key for it are right (sites.<site>.vmHosts), then re-run`,
  };
}

/** A machine a plan marked broken and MAAS would not then commission: out of service until it is commissioned. */
function leftBrokenFinding(site: string, entry: LeftBroken): Finding {
  const when = entry.markedAt ? ` on ${entry.markedAt}` : '';
  return {
    code: 'MAC_LEFT_BROKEN',
    severity: 'critical',
    subject: entry.hostname,
    summary: `${entry.hostname} is Broken: maas-chatops plan ${entry.planId} marked it broken${when} to update its MAC, and it was not commissioned after; it stays out of service until it is`,
    evidence: { systemId: entry.systemId, hostname: entry.hostname, status: 'Broken', planId: entry.planId, source: entry.source, ...(entry.markedAt ? { markedAt: entry.markedAt } : {}), ...(entry.markedBy ? { markedBy: entry.markedBy } : {}) },
    fix: `/maas fix-macs ${site}: plans its commissioning (and any MAC still to update), once MAAS can commission: the commissioning release's boot images on every connected rack`,
  };
}

function row(machine: MaasMachine, vmHost: string, domain: string, state: string, detail: string): MacRow {
  return { hostname: machine.hostname, status: machine.status_name, vmHost, domain, state, interface: '', recorded: '', live: '', detail };
}

function pairingRows(machine: MaasMachine, vmHost: string, domain: string, pairing: Pairing): MacRow[] {
  const base = row(machine, vmHost, domain, '', '');
  const rows: MacRow[] = pairing.drifted.map(({ iface, live }) => ({ ...base, state: 'drift', interface: iface.name, recorded: iface.mac_address, live: live.mac }));
  if (pairing.ambiguous) {
    const { recorded, live, reason } = pairing.ambiguous;
    rows.push({
      ...base,
      state: 'ambiguous',
      interface: recorded.map((i) => i.name).join(','),
      recorded: recorded.map((i) => i.mac_address).join(','),
      live: live.map((n) => n.mac).join(','),
      detail: reason,
    });
  }
  if (!rows.length) rows.push({ ...base, state: 'ok', interface: recordedInterfaces(machine).map((i) => i.name).join(',') });
  return rows;
}

function addTo(map: Map<string, string[]>, key: string, value: string): void {
  map.set(key, [...(map.get(key) ?? []), value]);
}

interface VerdictInput {
  site: string;
  total: number;
  drifted: number;
  checked: number;
  missing: number;
  notVirsh: number;
  unchecked: Map<string, string[]>;
  leftBroken: number;
}

function verdictOf(v: VerdictInput): string {
  if (v.total === 0) return `MAAS lists no machines for ${v.site}: nothing to compare`;
  const parts: string[] = [];
  if (v.drifted > 0) {
    const [verb, them] = v.drifted === 1 ? ['has', 'it'] : ['have', 'them'];
    parts.push(`${v.drifted} of ${v.total} machines at ${v.site} ${verb} drifted MACs: MAAS will see ${them} as unknown at PXE`);
  } else if (v.checked > 0) {
    const who = v.checked === v.total ? `All ${v.total} machines at ${v.site}` : `${v.checked} of ${v.total} machines at ${v.site}`;
    parts.push(`${who} match their live MACs`);
  } else {
    parts.push(`No machine at ${v.site} could be compared with its live MACs`);
  }
  if (v.missing) parts.push(`${v.missing} power_id${v.missing === 1 ? ' names' : 's name'} no libvirt domain`);
  for (const [why, names] of v.unchecked) parts.push(`${names.length} unchecked (${why})`);
  if (v.notVirsh) parts.push(`${v.notVirsh} not virsh-powered`);
  if (v.leftBroken) parts.push(`${v.leftBroken} left Broken by a fix-macs plan (not commissioned after)`);
  return parts.join('; ');
}
