import type { ForwarderDelegation, ResolverObservation, ResolverSnapshot } from '../dns-probe/types.ts';
import type { Finding } from '../report.ts';

export interface ResolverVerdict {
  verdict: string;
  findings: Finding[];
}

/**
 * Does the site's node-facing resolver answer its own zone? Nodes look up their cloud-config
 * URL in that zone while commissioning; a resolver that cannot answer it (the maas-agent
 * resolver on an isolated rack-only controller SERVFAILs everything) makes every node time
 * out after 30 minutes. Pure: the probe's snapshot in, findings out.
 */
export function evaluateResolver(snapshot: ResolverSnapshot): ResolverVerdict {
  if (snapshot.delegation) return evaluateDelegated(snapshot, snapshot.delegation);
  const { site, resolver, zone, observation } = snapshot;
  const evidence = baseEvidence(snapshot);
  if (observation.outcome === 'failed') {
    return {
      verdict: `Could not check the resolver of ${site}: ${observation.reason}`,
      findings: [
        {
          code: 'PROBE_FAILED',
          severity: 'error',
          subject: site,
          summary: `Could not ask ${resolver} for ${zone} SOA: ${observation.reason}`,
          evidence: { ...evidence, reason: observation.reason },
          ...(observation.fix ? { fix: observation.fix } : {}),
        },
      ],
    };
  }
  if (observation.outcome === 'no-reply') {
    return {
      verdict: `No reply from the resolver of ${site} (${resolver}) for ${zone}`,
      findings: [
        {
          code: 'RESOLVER_NO_REPLY',
          severity: 'critical',
          subject: site,
          summary: `${resolver} did not answer ${zone} SOA: nodes at ${site} cannot resolve their commissioning URL`,
          evidence: { ...evidence, error: observation.detail },
          fix: `Check that a DNS server runs and listens on ${resolver} (from the rack: dig @${resolver} ${zone} SOA). ${forwarderFix(snapshot)}`,
        },
      ],
    };
  }
  const replied = { ...evidence, status: observation.status, statusLine: observation.statusLine };
  if (observation.status === 'SERVFAIL') {
    return {
      verdict: `The resolver of ${site} (${resolver}) answers SERVFAIL for its own zone ${zone}`,
      findings: [
        {
          code: 'RESOLVER_SERVFAIL',
          severity: 'critical',
          subject: site,
          summary: `${resolver} answers SERVFAIL for ${zone} SOA: nodes at ${site} cannot find their cloud-config and commissioning times out after 30 minutes`,
          evidence: replied,
          fix: forwarderFix(snapshot),
        },
      ],
    };
  }
  if (observation.status !== 'NOERROR' || !observation.soa) {
    const what = observation.status === 'NOERROR' ? 'NOERROR without the SOA' : observation.status;
    return {
      verdict: `The resolver of ${site} (${resolver}) answers ${what} for ${zone} SOA`,
      findings: [
        {
          code: 'RESOLVER_BAD_ANSWER',
          severity: 'critical',
          subject: site,
          summary: `${resolver} answers ${what} for ${zone} SOA, where it should hold the zone: nodes at ${site} cannot resolve their commissioning URL`,
          evidence: replied,
          fix: `Check that rack.zone (${zone}) is MAAS's internal zone and that ${resolver} serves it. ${forwarderFix(snapshot)}`,
        },
      ],
    };
  }
  return {
    verdict: `The resolver of ${site} (${resolver}) answers ${zone}, SOA serial ${observation.soa.serial}`,
    findings: [
      {
        code: 'RESOLVER_OK',
        severity: 'info',
        subject: site,
        summary: `${resolver} answers ${zone} SOA with serial ${observation.soa.serial}`,
        evidence: { ...replied, serial: observation.soa.serial, soa: observation.soa },
      },
    ],
  };
}

function baseEvidence(snapshot: ResolverSnapshot): Record<string, unknown> {
  const evidence: Record<string, unknown> = {
    site: snapshot.site,
    resolver: snapshot.resolver,
    zone: snapshot.zone,
    probe: snapshot.probedBy,
  };
  if (snapshot.command) evidence.command = snapshot.command;
  if (snapshot.subnetProblem) evidence.subnetProblem = snapshot.subnetProblem;
  return evidence;
}

/**
 * MAAS's subnet points nodes at the forwarder (allow_dns off, dns_servers = forwarder): the
 * forwarder is the resolver nodes depend on, so it is what is judged. The rack's own resolver
 * still matters as a note: dhcpd hands it out first (the DHCP trap).
 */
function evaluateDelegated(snapshot: ResolverSnapshot, delegation: ForwarderDelegation): ResolverVerdict {
  const { subnet, forwarder } = delegation;
  const viaForwarder: ResolverSnapshot = {
    site: snapshot.site,
    resolver: forwarder,
    zone: snapshot.zone,
    probedBy: snapshot.probedBy,
    forwarder,
    observation: delegation.observation,
    ...(delegation.command ? { command: delegation.command } : {}),
  };
  const judged = evaluateResolver(viaForwarder);
  const subnetLine = `subnet ${subnet.cidr} (id ${subnet.id}): dns_servers ${subnet.dns_servers.join(' ')}, allow_dns off`;
  const delegationEvidence = { nodeFacing: 'forwarder', rackResolver: snapshot.resolver, subnet };
  const findings: Finding[] = judged.findings.map((f) => {
    const evidence = { ...f.evidence, ...delegationEvidence };
    if (f.code === 'RESOLVER_OK') {
      return { ...f, summary: `Nodes at ${snapshot.site} use the forwarder ${forwarder} (${subnetLine}); it answers ${snapshot.zone} SOA with serial ${String(f.evidence.serial)}`, evidence };
    }
    const fix = `MAAS's ${subnetLine} already points nodes at ${forwarder}, so the forwarder itself must answer: check it on the rack. ${f.fix ?? ''}`.trim();
    return { ...f, summary: `${f.summary} (nodes use it: ${subnetLine})`, evidence, fix };
  });
  if (!answers(snapshot.observation)) findings.push(dhcpTrapFinding(snapshot, 'info'));
  const verdict = judged.findings.some((f) => f.code === 'RESOLVER_OK')
    ? `Nodes at ${snapshot.site} resolve through the forwarder ${forwarder} (MAAS ${subnetLine}), which answers ${snapshot.zone}, SOA serial ${serialOf(delegation.observation)}`
    : `MAAS points nodes at ${snapshot.site} to the forwarder ${forwarder}, and it fails: ${judged.verdict}`;
  return { verdict, findings };
}

function answers(observation: ResolverObservation): boolean {
  return observation.outcome === 'reply' && observation.status === 'NOERROR' && observation.soa !== null;
}

function serialOf(observation: ResolverObservation): string {
  return observation.outcome === 'reply' && observation.soa ? String(observation.soa.serial) : '?';
}

function observed(observation: ResolverObservation): string {
  if (observation.outcome === 'reply') return `answers ${observation.status}${observation.status === 'NOERROR' && !observation.soa ? ' without the SOA' : ''}`;
  if (observation.outcome === 'no-reply') return 'does not reply';
  return `could not be asked (${observation.reason})`;
}

/**
 * The DHCP trap (seed 001): with allow_dns off and dns_servers = the forwarder, the rack's dhcpd
 * was still seen putting the rack's own address first in DHCP option 6, so every lookup first
 * hits the failing rack resolver and succeeds only by failing over. Info in resolver-check (it
 * works, slowly); a warning in fix-resolver's outcome (the operator should look once).
 */
export function dhcpTrapFinding(snapshot: Pick<ResolverSnapshot, 'site' | 'resolver' | 'zone' | 'observation'> & { forwarder?: string }, severity: 'info' | 'warning'): Finding {
  const forwarder = snapshot.forwarder ?? '<forwarder>';
  const rackHost = hostOf(snapshot.resolver);
  const forwarderHost = hostOf(forwarder);
  const status = snapshot.observation.outcome === 'reply' ? snapshot.observation.status : snapshot.observation.outcome;
  return {
    code: 'RESOLVER_DHCP_RACK_FIRST',
    severity,
    subject: snapshot.site,
    summary:
      `The rack's own resolver ${snapshot.resolver} still ${observed(snapshot.observation)} for ${snapshot.zone}, and dhcpd may still hand it out first in DHCP option 6 ` +
      `despite allow_dns off: nodes then reach ${forwarder} only by failing over from it`,
    evidence: { site: snapshot.site, rackResolver: snapshot.resolver, rackStatus: status, forwarder, zone: snapshot.zone },
    fix:
      `Check what nodes are given: on a node, /etc/resolv.conf (or \`resolvectl status\`) should list ${forwarderHost}; if ${rackHost} comes first, ` +
      `lookups wait for its failure each time. On the rack, the lease or dhcpd.conf line \`option domain-name-servers\` for the subnet shows the order. ` +
      `From the rack, \`${digLine(snapshot.resolver, snapshot.zone)}\` still answers ${status}; \`${digLine(forwarder, snapshot.zone)}\` must answer NOERROR.`,
  };
}

function splitLabel(label: string): { host: string; port?: string } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(label);
  if (bracketed) return { host: bracketed[1] as string, ...(bracketed[2] ? { port: bracketed[2] } : {}) };
  const parts = label.split(':');
  return parts.length === 2 ? { host: parts[0] as string, port: parts[1] as string } : { host: label };
}

function hostOf(label: string): string {
  return splitLabel(label).host;
}

function digLine(label: string, zone: string): string {
  const { host, port } = splitLabel(label);
  return `dig @${host}${port ? ` -p ${port}` : ''} ${zone} SOA`;
}

/** The runbook's standing fix for a rack whose own resolver cannot serve its nodes. */
function forwarderFix(snapshot: ResolverSnapshot): string {
  const forwarder = snapshot.forwarder ?? '<forwarder>';
  return (
    `Run a forwarder on the rack (dnsmasq, no-resolv, forwarding to the region's DNS) at ${forwarder}, ` +
    `then change the node-facing subnet in MAAS: dns_servers = ${hostOf(forwarder)}, allow_dns off. ` +
    `\`/maas fix-resolver ${snapshot.site}\` plans both steps.` +
    (snapshot.forwarder ? '' : ' Set rack.forwarder in the config first.')
  );
}
