import { isIPv4, isIPv6 } from 'node:net';

/**
 * Subnet membership as the controller's addressInPreferredSubnets does it with Go's
 * net.ParseCIDR / net.ParseIP / IPNet.Contains: an address or CIDR that does not parse
 * matches nothing, IPv4-mapped IPv6 addresses count as IPv4, and IPv4 never matches an
 * IPv6 subnet (or the reverse).
 */
export function ipInSubnets(address: string, subnets: readonly string[] | null): boolean {
  if (subnets === null || subnets.length === 0) return true;
  const ip = parseIp(address);
  if (!ip) return false;
  return subnets.some((subnet) => {
    const net = parseCidr(subnet);
    return net !== null && contains(net, ip);
  });
}

/** The entries of a preferred-subnet list that Go's ParseCIDR rejects (the controller skips them). */
export function invalidCidrs(subnets: readonly string[] | null): string[] {
  return (subnets ?? []).filter((s) => parseCidr(s) === null);
}

interface Cidr {
  bytes: Uint8Array;
  prefix: number;
}

export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  const isV6Text = text.slice(0, slash).includes(':');
  const max = isV6Text ? 128 : 32;
  if (prefix > max) return null;
  if (isV6Text && ip.length === 4) {
    // An IPv4-mapped IPv6 prefix: only its last 32 bits say anything about an IPv4 address.
    if (prefix < 96) return null;
    prefix -= 96;
  }
  return { bytes: ip, prefix };
}

/** 4 bytes for IPv4 (and IPv4-mapped IPv6, like Go's To4), 16 for IPv6, null if not an address. */
export function parseIp(text: string): Uint8Array | null {
  if (isIPv4(text)) return Uint8Array.from(text.split('.').map(Number));
  if (!isIPv6(text) || text.includes('%')) return null;
  const bytes = parseIpv6(text);
  if (!bytes) return null;
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

function parseIpv6(text: string): Uint8Array | null {
  let groups: number[] = [];
  let tail = text;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  const extra: number[] = [];
  if (v4?.[1]) {
    const parts = v4[1].split('.').map(Number);
    extra.push(((parts[0] ?? 0) << 8) | (parts[1] ?? 0), ((parts[2] ?? 0) << 8) | (parts[3] ?? 0));
    tail = text.slice(0, text.length - v4[1].length) + '0';
  }
  const [head, rest] = tail.split('::') as [string, string | undefined];
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  if (v4) (right.length ? right : left).pop();
  const fill = 8 - extra.length - left.length - right.length;
  if (rest === undefined && fill !== 0) return null;
  if (fill < 0) return null;
  groups = [...left, ...new Array<number>(fill).fill(0), ...right, ...extra];
  if (groups.length !== 8 || groups.some((g) => Number.isNaN(g) || g < 0 || g > 0xffff)) return null;
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

function contains(net: Cidr, ip: Uint8Array): boolean {
  if (net.bytes.length !== ip.length) return false;
  let bits = net.prefix;
  for (let i = 0; i < ip.length && bits > 0; i++) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((net.bytes[i] ?? 0) & mask) !== ((ip[i] ?? 0) & mask)) return false;
    bits -= 8;
  }
  return true;
}
