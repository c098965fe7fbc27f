import { hostOfLabel as hostOf, type ForwarderDelegation, type ResolverObservation, type ResolverSnapshot } from './types.ts';
import type { Finding } from '../../core/report.ts';
import { dhcpFindings } from './dhcp-findings.ts';

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
  const judged = snapshot.delegation ? evaluateDelegated(snapshot, snapshot.delegation) : evaluateProbe(snapshot);
  return { verdict: judged.verdict, findings: [...judged.findings, ...dhcpFindings(snapshot, snapshot.nodeSubnet)] };
}

/** The resolver's answer alone: what dig (or the bot's resolver) saw. */
function evaluateProbe(snapshot: ResolverSnapshot): ResolverVerdict {
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
    const what = observation.status !== 'NOERROR' ? observation.status : observation.otherSoaOwner ? `NOERROR with the SOA of another zone (${observation.otherSoaOwner})` : 'NOERROR without the SOA';
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
 * forwarder is the resolver nodes depend on, so it is what is judged. Whether the rack's dhcpd
 * really hands it out is read from its dhcpd.conf (dhcpFindings).
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
  const judged = evaluateProbe(viaForwarder);
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
  const verdict = judged.findings.some((f) => f.code === 'RESOLVER_OK')
    ? `Nodes at ${snapshot.site} resolve through the forwarder ${forwarder} (MAAS ${subnetLine}), which answers ${snapshot.zone}, SOA serial ${serialOf(delegation.observation)}`
    : `MAAS points nodes at ${snapshot.site} to the forwarder ${forwarder}, and it fails: ${judged.verdict}`;
  return { verdict, findings };
}

function serialOf(observation: ResolverObservation): string {
  return observation.outcome === 'reply' && observation.soa ? String(observation.soa.serial) : '?';
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
