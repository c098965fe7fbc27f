/**
 * The state a MAAS simulator serves. Plain, JSON-serialisable objects: a scenario can be written
 * to a file, cloned with structuredClone, and changed by a test between two calls.
 */
import type { SimDhcp, SimDiscovery, SimEvent, SimIpRange } from './scenario-records.ts';
import { NODE_STATUS, statusCode } from '../../src/adapters/maas/node-status.ts';

export type SimInterfaceType = 'physical' | 'bond' | 'bridge' | 'vlan' | 'alias';

export interface SimInterface {
  /** Unique across the whole scenario, as MAAS interface ids are. */
  id: number;
  name: string;
  type: SimInterfaceType;
  /** Stored as MAAS stores it: lower case, colon-separated. */
  mac_address: string;
  enabled: boolean;
  links: unknown[];
  vlan: unknown;
  /** Names of the interfaces a bond, bridge or VLAN is built on (same node). A VLAN copies its parent's MAC; bonds and bridges keep their own. */
  parents?: string[];
}

export type PowerState = 'on' | 'off' | 'unknown' | 'error';

export interface SimMachine {
  /** MAAS's internal node id: machines are listed in this order. */
  id: number;
  system_id: string;
  hostname: string;
  domain: string;
  /** NODE_STATUS code; status_name is derived. */
  status: number;
  /** What mark_fixed looks at: back to Deployed only if this is Deployed. Not shown by the API. */
  previous_status: number;
  /** Username, or null. MAAS lets only the owner mark a machine broken. */
  owner: string | null;
  power_type: string;
  power_state: PowerState;
  /** What `op=power_parameters` returns for this machine. */
  power_parameters: Record<string, unknown>;
  zone: string;
  pool: string;
  tag_names: string[];
  ip_addresses: string[];
  interfaces: SimInterface[];
  boot_interface_id: number | null;
  error_description: string;
  /** node.status_message(): the newest INFO-or-higher event as `type - description`; null without one. */
  status_message?: string | null;
  osystem: string;
  distro_series: string;
  architecture: string;
  /** A locked machine refuses edits and admin actions with 403 (auth/local.py) until op=unlock. */
  locked: boolean;
  /** The MAC the hardware really PXE-boots from; null: the recorded boot interface's. Commissioning completes only when MAAS knows it. */
  live_boot_mac: string | null;
  /** Set while commissioning runs: when it started (the simulator's clock) and whether MAAS knew the MAC the machine PXE-booted from. */
  commissioning: { startedAt: number; bootMacKnown: boolean } | null;
}

export interface SimDnsResource {
  id: number;
  /** `name.domain`; MAAS splits it at the first dot. */
  fqdn: string;
  address_ttl: number | null;
  /** The A/AAAA addresses. */
  ip_addresses: string[];
}

export interface SimVlan {
  id: number;
  vid: number;
  name: string;
  fabric: string;
  fabric_id: number;
  mtu: number;
  dhcp_on: boolean;
}

export interface SimSubnet {
  id: number;
  name: string;
  description: string;
  cidr: string;
  vlan: SimVlan;
  space: string | null;
  gateway_ip: string | null;
  dns_servers: string[];
  allow_dns: boolean;
  allow_proxy: boolean;
  managed: boolean;
  active_discovery: boolean;
  rdns_mode: number;
}

export interface SimService {
  name: string;
  status: 'running' | 'degraded' | 'dead' | 'off' | 'unknown';
  status_info: string;
}

export interface SimRackController {
  id: number;
  system_id: string;
  hostname: string;
  domain: string;
  zone: string;
  ip_addresses: string[];
  interfaces: SimInterface[];
  services: SimService[];
  /** What the rack reported; null for one that never connected (row rackcontrollers). */
  version: string | null;
  /** Whether the rack is connected to the region (false: MAAS cannot reach it over RPC). Default true. */
  connected?: boolean;
  /** Boot images the rack holds, as `op=list_boot_images` names them (`ubuntu/jammy`, `amd64`). */
  bootImages?: SimBootImage[];
  /** `arch/subarch` as MAAS shows it; default amd64/generic (the recorded region's rack is i386/generic). */
  architecture?: string;
}

/** One boot image on a rack (models/node.py RackController.list_boot_images: name, architecture, subarches). */
export interface SimBootImage {
  name: string;
  architecture: string;
  subarches: string[];
}

export interface MaasScenario {
  /** The MAAS user behind every API key the simulator accepts. */
  user: string;
  /** Whether that user is a MAAS admin (default true): mark_fixed, commission, interface, DNS resource and subnet edits need one. */
  userIsAdmin?: boolean;
  /** What `GET version/` answers (default 3.5.0): NEW takes interface edits only from 3.3. */
  version?: string;
  machines: SimMachine[];
  dnsresources: SimDnsResource[];
  subnets: SimSubnet[];
  rackControllers: SimRackController[];
  /** Names MAAS knows; when absent, the ones the machines and records use (plus `default` / `maas`). */
  domains?: string[];
  zones?: string[];
  pools?: string[];
  tags?: string[];
  /** IP ranges (api/ipranges.py); saving one starts MAAS's DHCP reconfiguration (see dhcp.ts). */
  ipranges?: SimIpRange[];
  /** The racks that serve DHCP and where their dhcpd.conf lives: the simulator writes it as MAAS would. */
  dhcp?: SimDhcp;
  /** Neighbours the racks observed (network discovery); empty when discovery is disabled. */
  discoveries?: SimDiscovery[];
  /** The node event log, any order (ids decide). */
  events?: SimEvent[];
  /** Config commissioning_osystem / commissioning_distro_series (default ubuntu jammy; 3.4.10's recorded region: focal). */
  commissioning?: { osystem: string; release: string };
}

// ---------------------------------------------------------------- builders

export const DEFAULT_USER = 'admin';

/** Statuses in which a MAAS machine has no owner. */
const UNOWNED_STATUSES: ReadonlySet<number> = new Set([NODE_STATUS.NEW, NODE_STATUS.READY]);

export interface InterfaceInput {
  mac: string;
  name?: string;
  id?: number;
  type?: SimInterfaceType;
  enabled?: boolean;
  links?: unknown[];
  vlan?: unknown;
  parents?: string[];
}

export function iface(input: InterfaceInput): SimInterface {
  return {
    id: input.id ?? 0,
    name: input.name ?? 'eth0',
    type: input.type ?? 'physical',
    mac_address: normaliseMac(input.mac),
    enabled: input.enabled ?? true,
    links: input.links ?? [],
    vlan: input.vlan ?? null,
    ...(input.parents ? { parents: [...input.parents] } : {}),
  };
}

/** Power settings of a libvirt VM, as MAAS's virsh driver stores them. */
export function virshPower(host: string, domain: string, user = 'ubuntu'): { power_type: string; power_parameters: Record<string, unknown> } {
  return {
    power_type: 'virsh',
    power_parameters: { power_address: `qemu+ssh://${user}@${host}/system`, power_id: domain, power_pass: '' },
  };
}

export interface MachineInput {
  system_id: string;
  hostname: string;
  /** A NODE_STATUS code or its name as MAAS prints it (`'Failed commissioning'`). Default Ready. */
  status?: number | string;
  previous_status?: number | string;
  /** Default: nobody for New and Ready, else the scenario user (`admin`). */
  owner?: string | null;
  domain?: string;
  zone?: string;
  pool?: string;
  tags?: string[];
  ip_addresses?: string[];
  /** Shorthand for physical interfaces eth0, eth1, ... with these MACs. */
  macs?: string[];
  interfaces?: (SimInterface | InterfaceInput)[];
  /** Default: the first interface. */
  boot_interface_id?: number | null;
  power?: { power_type: string; power_parameters: Record<string, unknown> };
  power_state?: PowerState;
  error_description?: string;
  osystem?: string;
  distro_series?: string;
  architecture?: string;
  locked?: boolean;
  /** The MAC the hardware really PXE-boots from, when it is not the recorded one. */
  live_boot_mac?: string;
  id?: number;
}

export function machine(input: MachineInput): SimMachine {
  const status = toStatus(input.status ?? NODE_STATUS.READY);
  const interfaces = input.interfaces
    ? input.interfaces.map((i) => ('mac_address' in i ? { ...i } : iface(i)))
    : (input.macs ?? []).map((mac, n) => iface({ mac, name: `eth${n}` }));
  const power = input.power ?? { power_type: 'manual', power_parameters: {} };
  const deployedLike = status === NODE_STATUS.DEPLOYED || status === NODE_STATUS.DEPLOYING;
  return {
    id: input.id ?? 0,
    system_id: input.system_id,
    hostname: input.hostname,
    domain: input.domain ?? 'maas',
    status,
    previous_status: toStatus(input.previous_status ?? status),
    owner: input.owner !== undefined ? input.owner : UNOWNED_STATUSES.has(status) ? null : DEFAULT_USER,
    power_type: power.power_type,
    power_state: input.power_state ?? (deployedLike ? 'on' : 'off'),
    power_parameters: { ...power.power_parameters },
    zone: input.zone ?? 'default',
    pool: input.pool ?? 'default',
    tag_names: [...(input.tags ?? [])],
    ip_addresses: [...(input.ip_addresses ?? [])],
    interfaces,
    boot_interface_id: input.boot_interface_id !== undefined ? input.boot_interface_id : (interfaces[0]?.id ?? null),
    error_description: input.error_description ?? '',
    osystem: input.osystem ?? (deployedLike ? 'ubuntu' : ''),
    distro_series: input.distro_series ?? (deployedLike ? 'jammy' : ''),
    architecture: input.architecture ?? 'amd64/generic',
    locked: input.locked ?? false,
    live_boot_mac: input.live_boot_mac ? normaliseMac(input.live_boot_mac) : null,
    commissioning: null,
  };
}

export function dnsResource(input: { id: number; fqdn: string; ips?: string[]; address_ttl?: number | null }): SimDnsResource {
  return { id: input.id, fqdn: input.fqdn, address_ttl: input.address_ttl ?? null, ip_addresses: [...(input.ips ?? [])] };
}

export interface SubnetInput {
  id: number;
  cidr: string;
  name?: string;
  description?: string;
  vlan?: Partial<SimVlan>;
  space?: string | null;
  gateway_ip?: string | null;
  dns_servers?: string[];
  allow_dns?: boolean;
  allow_proxy?: boolean;
  managed?: boolean;
  active_discovery?: boolean;
  rdns_mode?: number;
}

export function subnet(input: SubnetInput): SimSubnet {
  return {
    id: input.id,
    name: input.name ?? input.cidr,
    description: input.description ?? '',
    cidr: input.cidr,
    vlan: { id: 5001, vid: 0, name: 'untagged', fabric: 'fabric-0', fabric_id: 0, mtu: 1500, dhcp_on: true, ...input.vlan },
    space: input.space ?? null,
    gateway_ip: input.gateway_ip ?? null,
    dns_servers: [...(input.dns_servers ?? [])],
    allow_dns: input.allow_dns ?? true,
    allow_proxy: input.allow_proxy ?? true,
    managed: input.managed ?? true,
    active_discovery: input.active_discovery ?? false,
    rdns_mode: input.rdns_mode ?? 2,
  };
}

export interface RackControllerInput {
  system_id: string;
  hostname: string;
  ip_addresses?: string[];
  domain?: string;
  zone?: string;
  macs?: string[];
  interfaces?: (SimInterface | InterfaceInput)[];
  services?: SimService[];
  version?: string | null;
  id?: number;
  connected?: boolean;
  bootImages?: SimBootImage[];
  architecture?: string;
}

/** What a rack that has synced the default images holds: the commissioning releases of 3.4 (focal) and later (jammy). */
const DEFAULT_BOOT_IMAGES: SimBootImage[] = [
  { name: 'ubuntu/focal', architecture: 'amd64', subarches: ['generic'] },
  { name: 'ubuntu/jammy', architecture: 'amd64', subarches: ['generic'] },
];

export function rackController(input: RackControllerInput): SimRackController {
  const interfaces = input.interfaces
    ? input.interfaces.map((i) => ('mac_address' in i ? { ...i } : iface(i)))
    : (input.macs ?? []).map((mac, n) => iface({ mac, name: `eth${n}` }));
  return {
    id: input.id ?? 0,
    system_id: input.system_id,
    hostname: input.hostname,
    domain: input.domain ?? 'maas',
    zone: input.zone ?? 'default',
    ip_addresses: [...(input.ip_addresses ?? [])],
    interfaces,
    services: input.services ?? [
      { name: 'rackd', status: 'running', status_info: '' },
      { name: 'dhcpd', status: 'running', status_info: '' },
      { name: 'maas-agent', status: 'running', status_info: '' },
    ],
    version: input.version !== undefined ? input.version : '3.7.0',
    connected: input.connected ?? true,
    bootImages: input.bootImages ?? DEFAULT_BOOT_IMAGES.map((i) => ({ ...i, subarches: [...i.subarches] })),
    ...(input.architecture ? { architecture: input.architecture } : {}),
  };
}

/** The rack a scenario that names none has: connected, with the default boot images. */
export const DEFAULT_RACK_ID = 'rack00';

/** What a test or the lab gives `scenario()`: any part of a scenario; the rest takes its defaults. */
export type ScenarioInput = Partial<MaasScenario>;

/**
 * A complete scenario: a deep copy of the input, with node ids in listing order and every
 * interface without an id given a fresh one (unique across machines and racks).
 * A boot interface left at id 0 follows its interface's new id.
 */
export function scenario(input: ScenarioInput = {}): MaasScenario {
  const out: MaasScenario = structuredClone({
    ...input,
    user: input.user ?? DEFAULT_USER,
    machines: input.machines ?? [],
    dnsresources: input.dnsresources ?? [],
    subnets: input.subnets ?? [],
    // A region without a rack can commission nothing (models/node.py start): a scenario that names none gets one healthy rack.
    rackControllers: input.rackControllers ?? [rackController({ system_id: DEFAULT_RACK_ID, hostname: 'sim-rack' })],
  });
  assignNodeIds(out);
  assignInterfaceIds(out);
  if (out.user !== DEFAULT_USER) {
    for (const m of out.machines) if (m.owner === DEFAULT_USER) m.owner = out.user;
  }
  return out;
}

function assignNodeIds(s: MaasScenario): void {
  const nodes = [...s.machines, ...s.rackControllers];
  let next = Math.max(0, ...nodes.map((n) => n.id)) + 1;
  for (const node of nodes) if (!node.id) node.id = next++;
}

function assignInterfaceIds(s: MaasScenario): void {
  const nodes: { interfaces: SimInterface[]; boot_interface_id?: number | null }[] = [...s.machines, ...s.rackControllers];
  const all = nodes.flatMap((n) => n.interfaces);
  let next = Math.max(0, ...all.map((i) => i.id)) + 1;
  for (const node of nodes) {
    const bootIndex = node.boot_interface_id === 0 ? node.interfaces.findIndex((i) => i.id === 0) : -1;
    for (const i of node.interfaces) if (!i.id) i.id = next++;
    if (bootIndex >= 0) node.boot_interface_id = node.interfaces[bootIndex]?.id ?? null;
  }
}

function toStatus(status: number | string): number {
  if (typeof status === 'number') return status;
  const code = statusCode(status);
  if (code === undefined) throw new Error(`unknown MAAS status "${status}"`);
  return code;
}

// ---------------------------------------------------------------- MACs

/** MAAS's accepted input forms (maascommon/fields.py MAC_FIELD_RE). */
export const MAC_FIELD_RE = /^(?:([0-9a-fA-F]{1,2}:){5}[0-9a-fA-F]{1,2}|([0-9a-fA-F]{1,2}-){5}[0-9a-fA-F]{1,2}|([0-9a-fA-F]{3,4}.){2}[0-9a-fA-F]{3,4})$/;

/** Lower case, colon-separated, as MAAS stores a MAC (maascommon/fields.py normalise_macaddress). */
export function normaliseMac(mac: string): string {
  const tokens = mac.toLowerCase().split(/[-:.]/);
  if (tokens.length === 1) return (tokens[0]?.match(/../g) ?? []).join(':');
  if (tokens.length === 3) return tokens.flatMap((t) => t.padStart(4, '0').match(/../g) ?? []).join(':');
  return tokens.map((t) => t.padStart(2, '0')).join(':');
}

/** A fresh key in MAAS's shape (18:18:32 characters), for labs and tests. */
export function randomApiKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const pick = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => alphabet[b % alphabet.length]).join('');
  return `${pick(18)}:${pick(18)}:${pick(32)}`;
}
