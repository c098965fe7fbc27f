import { sourceOf, type DhcpObservation } from '../dhcpd-conf/index.ts';
import { answersZone as answers } from './node-facing.ts';
import { hostOfLabel as hostOf, type ResolverObservation, type ResolverSnapshot } from './types.ts';
import type { Finding } from '../../core/report.ts';

/** The node-facing subnet as MAAS holds it, when it was looked up. */
export interface NodeSubnet {
  id: number;
  cidr: string;
  dns_servers: string[];
  allow_dns: boolean;
}

/**
 * What MAAS renders into option 6 for the subnet (maasserver/dhcp.py): with allow_dns off only the
 * subnet's dns_servers (get_default_dns_servers returns nothing); with allow_dns on MAAS's own
 * servers first (the rack controllers' addresses on the subnet, the region last), then dns_servers.
 */
export function maasOption6(subnet: NodeSubnet): { exact: string[] } | { endsWith: string[] } {
  return subnet.allow_dns ? { endsWith: [...subnet.dns_servers] } : { exact: [...subnet.dns_servers] };
}

function matchesMaas(servers: string[], subnet: NodeSubnet): boolean {
  const expected = maasOption6(subnet);
  if ('exact' in expected) return servers.join(' ') === expected.exact.join(' ');
  return expected.endsWith.length === 0 || servers.slice(-expected.endsWith.length).join(' ') === expected.endsWith.join(' ');
}

function rackStatus(observation: ResolverObservation): string {
  if (observation.outcome === 'reply') return observation.status === 'NOERROR' && !observation.soa ? 'NOERROR without the SOA' : observation.status;
  return observation.outcome === 'no-reply' ? 'no reply' : 'not measured';
}

const SOURCE_ORDER = 'maasserver/dhcp.py: get_default_dns_servers puts the rack controllers\u2019 addresses on the subnet first and the region last, make_subnet_config appends the subnet\u2019s dns_servers';
const SOURCE_STALE =
  'MAAS 3.7 and later start no DHCP reconfiguration for a dns_servers or allow_dns edit (models/signals/subnet.py watches only vlan_id); up to 3.6 a database trigger (sys_dhcp_subnet_update) did';

const SOURCE_UNLOADED =
  'MAAS 3.7 rewrites dhcpd.conf on every DHCP change but restarts dhcpd only on a full reload (maastemporalworker/workflow/dhcp.py: a static or reserved IP change goes through OMAPI)';

/** Variants named in a summary; the evidence carries all of them. */
const VARIANTS_SHOWN = 3;

type ReadDhcp = Extract<DhcpObservation, { outcome: 'read' }>;

function serversText(servers: string[] | null): string {
  return servers === null ? 'no lease' : servers.join(', ') || 'no DNS server';
}

function variantsText(dhcp: ReadDhcp): string {
  if (!dhcp.variants.length) return '';
  const shown = dhcp.variants.slice(0, VARIANTS_SHOWN).map((v) => `${v.who} get ${serversText(v.servers)} (${v.at})`);
  const more = dhcp.variants.length - shown.length + dhcp.moreVariants;
  return `; some nodes get something else: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/**
 * DHCP option 6 as the rack's dhcpd really hands it out, and what follows from it: the servers an
 * ordinary node gets, in order, and the statement that sets them; the pools, classes and hosts that
 * give some nodes something else; the rack's own failing resolver first for any of them; a file
 * older than MAAS's subnet; a file dhcpd would refuse; or why it could not be read (then the
 * verdict stands on dig alone).
 */
export function dhcpFindings(snapshot: ResolverSnapshot, subnet: NodeSubnet | undefined): Finding[] {
  const dhcp = snapshot.dhcp;
  if (!dhcp) return [];
  if (dhcp.outcome === 'refused') return [refusedFinding(snapshot.site, dhcp)];
  if (dhcp.outcome !== 'read') return [unreadFinding(snapshot.site, dhcp)];
  const { site } = snapshot;
  const rackHost = hostOf(snapshot.resolver);
  const shown = dhcp.servers.join(', ') || '(none)';
  const stale = subnet !== undefined && !matchesMaas(dhcp.servers, subnet);
  const unloaded = dhcp.serving.loaded === false;
  const unsure = dhcp.unread.length > 0 || !dhcp.leases || dhcp.unresolved.length > 0;
  const evidence: Record<string, unknown> = { site, path: dhcp.path, subnet: dhcp.subnet, option6: dhcp.servers, scope: dhcp.scope, serving: dhcp.serving, leases: dhcp.leases };
  if (dhcp.line) Object.assign(evidence, { line: dhcp.line, at: dhcp.at });
  if (dhcp.variants.length) Object.assign(evidence, { variants: dhcp.variants, moreVariants: dhcp.moreVariants });
  for (const key of ['notes', 'unread', 'unresolved'] as const) if (dhcp[key].length) evidence[key] = dhcp[key];
  if (dhcp.moreUnread) evidence.moreUnread = dhcp.moreUnread;
  if (subnet) evidence.maasSubnet = { id: subnet.id, dns_servers: subnet.dns_servers, allow_dns: subnet.allow_dns };
  const handed = dhcp.leases
    ? `Nodes on ${dhcp.subnet} are handed DHCP option 6: ${shown}, in that order (${sourceOf(dhcp)})`
    : `Dynamic nodes on ${dhcp.subnet} get no lease from ${dhcp.path} (${dhcp.notes.join('; ')}); nodes with a fixed address are handed DHCP option 6: ${shown}, in that order (${sourceOf(dhcp)})`;
  const findings: Finding[] = [
    {
      code: 'RESOLVER_DHCP_SERVERS',
      severity: stale || unloaded || unsure ? 'warning' : 'info',
      subject: site,
      summary:
        handed +
        variantsText(dhcp) +
        (dhcp.unread.length ? `; not read, and may set option 6 too: ${dhcp.unread.join('; ')}${dhcp.moreUnread ? `; and ${dhcp.moreUnread} more` : ''}` : '') +
        (dhcp.unresolved.length ? `; the rack does not resolve ${dhcp.unresolved.join(', ')}, which dhcpd would have to` : '') +
        (stale && subnet ? `; MAAS's subnet now gives ${describeExpected(subnet)}, so ${dhcp.scope.startsWith('subnet') ? "the rack's dhcpd.conf predates the subnet's last change" : `${dhcp.scope} overrides what MAAS renders for the subnet (a DHCP snippet)`}` : '') +
        (unloaded ? `; but the running dhcpd started before the file was last written, so it may still hand out what it loaded then` : ''),
      evidence,
      ...(stale ? { fix: staleFix(site, dhcp) } : {}),
      ...(!stale && unloaded ? { fix: `${SOURCE_UNLOADED}. \`/maas fix-resolver ${site}\` has MAAS rewrite it and restart dhcpd` } : {}),
    },
  ];
  const rackFirst = [...(dhcp.servers[0] === rackHost ? ['nodes'] : []), ...dhcp.variants.filter((v) => v.servers?.[0] === rackHost).map((v) => v.who)];
  if (rackFirst.length && !answers(snapshot.observation)) findings.push(rackFirstFinding(snapshot, dhcp.servers[0] === rackHost ? dhcp.servers : (dhcp.variants.find((v) => v.servers?.[0] === rackHost)?.servers ?? []), subnet, rackFirst));
  return findings;
}

function staleFix(site: string, dhcp: ReadDhcp): string {
  if (dhcp.scope.startsWith('subnet')) return `${SOURCE_STALE}. \`/maas fix-resolver ${site}\` has MAAS rewrite it; by hand, see docs/findings.md#resolver_dhcp_servers`;
  return `${dhcp.at ?? dhcp.path} sets option 6 in ${dhcp.scope}, which MAAS writes from a DHCP snippet and no subnet edit changes: edit or delete that snippet (MAAS UI: Settings → DHCP snippets, or \`maas <profile> dhcpsnippets read\`)`;
}

function refusedFinding(site: string, dhcp: Extract<DhcpObservation, { outcome: 'refused' }>): Finding {
  const [first, ...rest] = dhcp.problems;
  const more = rest.length + (dhcp.moreProblems ?? 0);
  return {
    code: 'RESOLVER_DHCP_REFUSED',
    severity: 'warning',
    subject: site,
    summary: `dhcpd would refuse ${dhcp.path} (${first ?? '?'}${more ? `; and ${more} more` : ''}): a dhcpd started with it exits, so nodes on ${dhcp.subnet} get no answer from this rack after its next restart; what the running dhcpd hands out cannot be read from the file`,
    evidence: { site, path: dhcp.path, subnet: dhcp.subnet, problems: dhcp.problems, moreProblems: dhcp.moreProblems ?? 0, serving: dhcp.serving },
    fix: `Find the DHCP snippet that wrote it (MAAS UI: Settings → DHCP snippets, or \`maas <profile> dhcpsnippets read\`) and fix or delete it; \`dhcpd -t -4 -cf ${dhcp.path}\` on the rack confirms`,
  };
}

function describeExpected(subnet: NodeSubnet): string {
  const expected = maasOption6(subnet);
  if ('exact' in expected) return `${expected.exact.join(', ') || '(none)'} (allow_dns off)`;
  return `MAAS's own servers followed by ${expected.endsWith.join(', ') || 'nothing'} (allow_dns on)`;
}

function rackFirstFinding(snapshot: ResolverSnapshot, servers: string[], subnet: NodeSubnet | undefined, who: string[]): Finding {
  const rackHost = hostOf(snapshot.resolver);
  const status = rackStatus(snapshot.observation);
  const cause =
    subnet === undefined
      ? `MAAS puts the rack first only while allow_dns is on (${SOURCE_ORDER}); otherwise the file predates the subnet's last change`
      : subnet.allow_dns
        ? `allow_dns is on for subnet ${subnet.cidr}, and then MAAS puts the rack first by design (${SOURCE_ORDER}): turn allow_dns off so option 6 carries only dns_servers`
        : `with allow_dns off MAAS renders only dns_servers (${subnet.dns_servers.join(', ') || 'none'}), so the rack's dhcpd.conf predates the subnet's last change: ${SOURCE_STALE}`;
  return {
    code: 'RESOLVER_DHCP_RACK_FIRST',
    severity: 'warning',
    subject: snapshot.site,
    summary: `DHCP option 6 hands ${who.join(', ')} the rack's own resolver ${rackHost} first (${servers.join(', ')}), and it answers ${status} for ${snapshot.zone}: every lookup fails there before a node tries the next server`,
    evidence: { site: snapshot.site, rackResolver: snapshot.resolver, rackStatus: status, option6: servers, who, cause },
    fix: `Cause: ${cause}. \`/maas fix-resolver ${snapshot.site}\` sets the subnet and has MAAS rewrite the rack's dhcpd.conf.`,
  };
}

function unreadFinding(site: string, dhcp: Exclude<DhcpObservation, { outcome: 'read' | 'refused' }>): Finding {
  const why = dhcp.outcome === 'no-subnet' ? dhcp.problem : dhcp.reason;
  return {
    code: 'RESOLVER_DHCP_UNREAD',
    severity: 'info',
    subject: site,
    summary: `DHCP option 6 not read from the rack (${why}): the verdict stands on dig alone`,
    evidence: { site, ...dhcp },
    ...(dhcp.outcome === 'unreadable' ? { fix: dhcp.fix } : {}),
  };
}
