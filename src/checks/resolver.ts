import type { ResolverSnapshot } from '../dns-probe/types.ts';
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
  return evidence;
}

/** The runbook's standing fix for a rack whose own resolver cannot serve its nodes. */
function forwarderFix(snapshot: ResolverSnapshot): string {
  const forwarder = snapshot.forwarder ?? '<forwarder>';
  return (
    `Run a forwarder on the rack (dnsmasq, no-resolv, forwarding to the region's DNS) at ${forwarder}, ` +
    `then change the node-facing subnet in MAAS: dns_servers = ${forwarder}, allow_dns off. ` +
    `\`/maas fix-resolver ${snapshot.site}\` plans both steps.` +
    (snapshot.forwarder ? '' : ' Set rack.forwarder in the config first.')
  );
}
