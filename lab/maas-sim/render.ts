/**
 * Scenario state → the JSON MAAS 2.0 returns (field lists from canonical/maas
 * src/maasserver/api/machines.py, interfaces.py, dnsresources.py, subnets.py, rackcontrollers.py).
 */
import { readFileSync } from 'node:fs';
import { statusName } from '../../src/adapters/maas/node-status.ts';
import type { MaasScenario, SimDnsResource, SimInterface, SimMachine, SimRackController, SimSubnet } from './scenario.ts';
import { knownDomains, knownPools, knownZones } from './scenario-lookups.ts';
import { versionAtLeast } from '../../src/adapters/maas/maas-version.ts';
import { DEFAULT_SIM_VERSION } from './sim-http.ts';

export const API_PATH = '/MAAS/api/2.0/';

/**
 * What a real 3.4.10 region renders for the parts of a machine the simulator does not model
 * (storage, NUMA, test statuses, hardware info, interface speeds): taken from one machine of the
 * recorded answers (test/fixtures/maas-3.4.10/, row machines-admin-all), so that machine JSON has
 * MAAS's shape and size (api/machines.py DISPLAYED_MACHINE_FIELDS, about 13 KB a machine).
 */
interface MachineTemplate {
  machine: Record<string, unknown>;
  /** The machine's one disk; `{system_id}` stands for the machine's system id. */
  disk: Record<string, unknown>;
  interface: Record<string, unknown>;
}

const TEMPLATE = JSON.parse(readFileSync(new URL('./machine-template.json', import.meta.url), 'utf8')) as MachineTemplate;
const DISK_TEXT = JSON.stringify(TEMPLATE.disk);

/** The VLAN MAAS shows on an interface of the default fabric (a scenario interface without one). */
const DEFAULT_INTERFACE_VLAN = {
  vid: 0,
  mtu: 1500,
  dhcp_on: false,
  external_dhcp: null,
  relay_vlan: null,
  fabric: 'fabric-0',
  id: 5001,
  name: 'untagged',
  secondary_rack: null,
  space: 'undefined',
  primary_rack: null,
  fabric_id: 0,
  resource_uri: `${API_PATH}vlans/5001/`,
};

/** `siblings`: the node's interfaces, for `children` (the names of interfaces built on this one). */
export function interfaceJson(systemId: string, i: SimInterface, siblings: readonly SimInterface[] = []): Record<string, unknown> {
  return {
    ...TEMPLATE.interface,
    system_id: systemId,
    id: i.id,
    name: i.name,
    type: i.type,
    vlan: i.vlan ?? DEFAULT_INTERFACE_VLAN,
    mac_address: i.mac_address,
    parents: i.parents ?? [],
    children: siblings.filter((c) => c.parents?.includes(i.name)).map((c) => c.name),
    tags: [],
    enabled: i.enabled,
    links: i.links,
    resource_uri: `${API_PATH}nodes/${systemId}/interfaces/${i.id}/`,
  };
}

function diskJson(systemId: string): Record<string, unknown> {
  return JSON.parse(DISK_TEXT.replaceAll('{system_id}', systemId)) as Record<string, unknown>;
}

/** A stable hardware UUID per node id, in the form MAAS shows. */
function hardwareUuid(id: number): string {
  return `90e09ea0-edb4-11f1-9168-${id.toString(16).padStart(12, '0')}`;
}

function named(list: string[], name: string): { id: number; name: string; description: string } {
  return { id: Math.max(0, list.indexOf(name)) + 1, name, description: '' };
}

function domainJson(state: MaasScenario, name: string): Record<string, unknown> {
  return { id: knownDomains(state).indexOf(name), name, authoritative: true, ttl: null, is_default: name === 'maas' };
}

export function machineJson(state: MaasScenario, m: SimMachine): Record<string, unknown> {
  const boot = m.interfaces.find((i) => i.id === m.boot_interface_id);
  const disk = diskJson(m.system_id);
  const json: Record<string, unknown> = {
    ...TEMPLATE.machine,
    system_id: m.system_id,
    hostname: m.hostname,
    description: '',
    hardware_uuid: hardwareUuid(m.id),
    domain: domainJson(state, m.domain),
    fqdn: `${m.hostname}.${m.domain}`,
    owner: m.owner,
    owner_data: {},
    locked: m.locked,
    architecture: m.architecture,
    status: m.status,
    status_name: statusName(m.status),
    status_message: m.status_message ?? null,
    status_action: null,
    osystem: m.osystem,
    distro_series: m.distro_series,
    netboot: true,
    power_type: m.power_type,
    power_state: m.power_state,
    tag_names: m.tag_names,
    address_ttl: null,
    ip_addresses: m.ip_addresses,
    boot_interface: boot ? interfaceJson(m.system_id, boot, m.interfaces) : null,
    interface_set: m.interfaces.map((i) => interfaceJson(m.system_id, i, m.interfaces)),
    boot_disk: disk,
    blockdevice_set: [disk],
    physicalblockdevice_set: [disk],
    zone: named(knownZones(state), m.zone),
    pool: named(knownPools(state), m.pool),
    node_type: 0,
    node_type_name: 'Machine',
    resource_uri: `${API_PATH}machines/${m.system_id}/`,
  };
  // api/machines.py DISPLAYED_MACHINE_FIELDS gained error_description in 3.5.0; 3.4 stores it without showing it.
  if (versionAtLeast(state.version ?? DEFAULT_SIM_VERSION, 3, 5)) json.error_description = m.error_description;
  return json;
}

export function dnsResourceJson(r: SimDnsResource): Record<string, unknown> {
  return {
    id: r.id,
    fqdn: r.fqdn,
    address_ttl: r.address_ttl,
    ip_addresses: r.ip_addresses.map((ip) => ({
      ip,
      alloc_type: 4,
      alloc_type_name: 'User reserved',
      created: '2026-01-01T00:00:00.000',
      subnet: null,
      interface_set: [],
    })),
    resource_records: [],
    resource_uri: `${API_PATH}dnsresources/${r.id}/`,
  };
}

export function subnetJson(s: SimSubnet): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    vlan: { ...s.vlan, resource_uri: `${API_PATH}vlans/${s.vlan.id}/` },
    space: s.space ?? 'undefined',
    cidr: s.cidr,
    gateway_ip: s.gateway_ip,
    dns_servers: s.dns_servers,
    rdns_mode: s.rdns_mode,
    active_discovery: s.active_discovery,
    allow_dns: s.allow_dns,
    allow_proxy: s.allow_proxy,
    managed: s.managed,
    disabled_boot_architectures: [],
    resource_uri: `${API_PATH}subnets/${s.id}/`,
  };
}

export function rackControllerJson(state: MaasScenario, r: SimRackController): Record<string, unknown> {
  return {
    system_id: r.system_id,
    hostname: r.hostname,
    description: '',
    domain: domainJson(state, r.domain),
    fqdn: `${r.hostname}.${r.domain}`,
    architecture: r.architecture ?? 'amd64/generic',
    osystem: 'ubuntu',
    distro_series: 'noble',
    // A rack without a BMC, as the recorded region shows it (row rackcontrollers).
    power_type: '',
    power_state: r.connected === false ? 'error' : 'unknown',
    ip_addresses: r.ip_addresses,
    interface_set: r.interfaces.map((i) => interfaceJson(r.system_id, i)),
    zone: named(knownZones(state), r.zone),
    node_type: 2,
    node_type_name: 'Rack controller',
    tag_names: [],
    service_set: r.services,
    version: r.version,
    resource_uri: `${API_PATH}rackcontrollers/${r.system_id}/`,
  };
}
