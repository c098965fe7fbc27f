import { isIPv4 } from 'node:net';

/** `10.20.0.53` as an unsigned 32-bit number, or undefined. */
export function ipv4Number(text: string): number | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

export function ipv4Text(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** The prefix length of a contiguous netmask, or undefined. */
export function prefixOfMask(mask: number): number | undefined {
  for (let prefix = 0; prefix <= 32; prefix++) if (maskOfPrefix(prefix) === mask) return prefix;
  return undefined;
}

export function maskOfPrefix(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

export function inNetwork(address: number, network: number, mask: number): boolean {
  return (address & mask) >>> 0 === network;
}

/** `10.20.0.0/24` as network and mask, or undefined. */
export function parseIpv4Cidr(cidr: string): { network: number; mask: number } | undefined {
  const [ip, prefixText] = cidr.trim().split('/');
  const network = ipv4Number(ip ?? '');
  const prefix = Number(prefixText);
  if (network === undefined || !/^\d{1,2}$/.test(prefixText ?? '') || prefix > 32) return undefined;
  return { network: (network & maskOfPrefix(prefix)) >>> 0, mask: maskOfPrefix(prefix) };
}
