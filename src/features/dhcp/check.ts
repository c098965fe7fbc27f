import { defineCheck } from '../check-spec.ts';
import { evaluateDhcp } from './evaluate.ts';
import { gatherDhcp } from './gather.ts';

/** `dhcp-check <site>|all`: which DNS servers the rack's dhcpd hands nodes on the node-facing subnet (DHCP option 6). */
export const dhcpCheck = defineCheck({
  name: 'dhcp-check',
  targetKind: 'site',
  summary: "which DNS servers the rack's dhcpd.conf hands nodes (DHCP option 6), against MAAS's node-facing subnet",
  dedup: 'same-target',
  appliesTo: (site) => site.rack?.subnet !== undefined,
  gather: gatherDhcp,
  evaluate: evaluateDhcp,
});
