import type { Token } from './lexer.ts';
import { inNetwork, ipv4Text, prefixOfMask } from './ipv4.ts';
import { dottedQuad, keyword } from './words.ts';

/**
 * `subnet <network> netmask <mask>` (server/confpars.c parse_subnet_declaration): both dotted
 * quads, `netmask` in any case, and a network number with no host bits set.
 */
export function subnetHeader(header: readonly Token[]): { cidr: string; network: number; mask: number } | { problem: string } {
  const network = dottedQuad(header.slice(1, 8));
  if (network === undefined) return { problem: 'the network number is not a dotted quad (dhcpd: parse error)' };
  if (keyword(header, 8) !== 'netmask') return { problem: 'no `netmask` after the network number (dhcpd: "Expecting netmask")' };
  const mask = dottedQuad(header.slice(9, 16));
  if (mask === undefined || header.length !== 16) return { problem: 'the netmask is not one dotted quad (dhcpd: parse error)' };
  if (!inNetwork(network, network, mask)) return { problem: `${ipv4Text(network)} has bits outside netmask ${ipv4Text(mask)} (dhcpd: "bad subnet number/mask combination")` };
  const prefix = prefixOfMask(mask);
  return { cidr: `${ipv4Text(network)}/${prefix ?? ipv4Text(mask)}`, network, mask };
}
