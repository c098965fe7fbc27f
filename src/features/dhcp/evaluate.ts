import { probeFailed } from '../../core/report.ts';
import type { Evaluation } from '../check-spec.ts';
import { dhcpFindings } from '../resolver/dhcp-findings.ts';
import { evaluateResolverCheck } from '../resolver/check.ts';
import type { DhcpSnapshot } from './gather.ts';

/** Pure: the option 6 servers nodes are handed, whether they are what MAAS's subnet says, and the rack's failing resolver first. */
export function evaluateDhcp(snapshot: DhcpSnapshot): Evaluation {
  const { site } = snapshot;
  if (snapshot.outcome === 'no-rack') return evaluateResolverCheck({ site });
  if (snapshot.outcome === 'unread') {
    return { verdict: `Could not read DHCP option 6 at ${site}: ${snapshot.reason}`, findings: [probeFailed(site, `DHCP option 6 not read: ${snapshot.reason}`, snapshot.fix)] };
  }
  const { dhcp } = snapshot.rack;
  const findings = dhcpFindings(snapshot.rack, snapshot.subnet);
  if (dhcp.outcome === 'refused') return { verdict: `${site}: dhcpd would refuse ${dhcp.path}, so nodes on ${dhcp.subnet} get no answer from this rack once dhcpd restarts`, findings };
  const shown = dhcp.servers.join(', ') || 'no DNS server';
  const others = dhcp.variants.length + dhcp.moreVariants;
  const handed = dhcp.leases
    ? `${site}: nodes on ${dhcp.subnet} are handed ${shown} (DHCP option 6${dhcp.scope.startsWith('subnet') ? '' : `, set in ${dhcp.scope}`})${others ? `; ${others} narrower scope${others === 1 ? ' gives' : 's give'} some nodes something else` : ''}`
    : `${site}: dynamic nodes on ${dhcp.subnet} get no lease from the rack's dhcpd; nodes with a fixed address are handed ${shown} (DHCP option 6)`;
  const unreadParts = dhcp.unread.length + (dhcp.moreUnread ?? 0);
  const unread = unreadParts ? `; ${unreadParts} part${unreadParts === 1 ? '' : 's'} of the file could not be read and may set option 6 too` : '';
  if (findings.some((f) => f.code === 'RESOLVER_DHCP_RACK_FIRST')) return { verdict: `${handed}${unread}: the rack's own failing resolver comes first`, findings };
  const servers = findings.find((f) => f.code === 'RESOLVER_DHCP_SERVERS');
  const differs = servers?.severity === 'warning' && servers.fix !== undefined;
  if (differs) return { verdict: `${handed}${unread}, which may not be what MAAS's subnet says now`, findings };
  return { verdict: `${handed}${unread}`, findings };
}
