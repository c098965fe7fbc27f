import { isIP } from 'node:net';

/** Where a virsh-powered machine lives, read from MAAS's `power_address`. */
export interface VirshAddress {
  /** The VM host, lowercase; an IPv6 address without brackets. */
  host: string;
  /** The SSH port the URI names, if any. */
  port?: number;
  /** The SSH user the URI names, if any. */
  user?: string;
  /** The URI to give virsh on the host itself: `qemu+ssh://u@h/system` → `qemu:///system`. */
  localUri: string;
}

export type VirshAddressResult = { ok: true; address: VirshAddress } | { ok: false; reason: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/;

/**
 * Parses a libvirt connection URI as MAAS stores it for the virsh power type
 * (`qemu+ssh://ubuntu@172.16.1.28/system`; MAAS runs `virsh --connect <power_address>`).
 * Accepts a port, no user, an IPv6 host in brackets, and transport parameters (dropped).
 */
export function parseVirshAddress(powerAddress: string): VirshAddressResult {
  const text = powerAddress.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: `power_address ${JSON.stringify(text)} is not a libvirt URI such as qemu+ssh://user@host/system` };
  }
  const driver = url.protocol.replace(/:$/, '').split('+')[0] ?? '';
  if (!/^[a-z][a-z0-9]*$/.test(driver)) return { ok: false, reason: `power_address ${JSON.stringify(text)} names no libvirt driver` };
  const host = hostOf(url.hostname);
  if (host === '') return { ok: false, reason: `power_address ${JSON.stringify(text)} names no remote VM host` };
  if (host === null) return { ok: false, reason: `power_address ${JSON.stringify(text)} has an invalid host` };
  const address: VirshAddress = { host, localUri: `${driver}://${localPath(url.pathname)}` };
  if (url.port) address.port = Number(url.port);
  if (url.username) {
    const user = safeDecode(url.username);
    if (user === null || !USER.test(user)) return { ok: false, reason: `power_address ${JSON.stringify(text)} has an invalid user name` };
    address.user = user;
  }
  return { ok: true, address };
}

function hostOf(hostname: string): string | null {
  if (hostname === '') return '';
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare)) return bare.toLowerCase();
  const lower = bare.toLowerCase().replace(/\.$/, '');
  return lower.split('.').every((label) => LABEL.test(label)) ? lower : null;
}

function localPath(pathname: string): string {
  return /^\/[A-Za-z0-9_/-]*$/.test(pathname) && pathname !== '/' ? pathname : '/system';
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** The key a VM host is grouped under: host, plus the port when the URI names one. */
export function vmHostKey(address: Pick<VirshAddress, 'host' | 'port'>): string {
  if (address.port === undefined) return address.host;
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
