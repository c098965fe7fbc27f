/** Shapes of the MAAS 2.0 API as canonical/maas serves them (src/maasserver/api/*.py; docs/maas-behaviour.md). */

export interface MaasInterface {
  id: number;
  name: string;
  type: string;
  mac_address: string;
  enabled?: boolean;
  links?: unknown[];
  /** Names of the interfaces a bond, bridge or VLAN is built on. */
  parents?: string[];
}

export interface MaasMachine {
  system_id: string;
  hostname: string;
  fqdn: string;
  status: number;
  status_name: string;
  power_type: string;
  power_state: string;
  zone: { name: string };
  pool: { name: string };
  tag_names: string[];
  ip_addresses: string[];
  boot_interface: MaasInterface | null;
  interface_set: MaasInterface[];
  /** Username or null. MAAS lets only the owner mark_broken a machine (else 403). */
  owner?: string | null;
  /** Shown from MAAS 3.5 (api/machines.py DISPLAYED_MACHINE_FIELDS); 3.4 keeps it to itself. */
  error_description?: string;
  /** MAAS's newest INFO event for the machine as `type - description` (models/node.py status_message); null without one. */
  status_message?: string | null;
  /** `amd64/generic`: the architecture, then the subarchitecture. */
  architecture?: string;
  /** A locked machine refuses every edit and admin action (auth/local.py) until `op=unlock`. */
  locked?: boolean;
}

export interface PowerParameters {
  power_address?: string;
  power_id?: string;
  [key: string]: unknown;
}

export interface DnsResource {
  id: number;
  fqdn: string;
  address_ttl: number | null;
  ip_addresses: { ip: string }[];
  resource_records?: unknown[];
}

export interface Subnet {
  id: number;
  name: string;
  cidr: string;
  vlan?: unknown;
  gateway_ip?: string | null;
  dns_servers: string[];
  allow_dns: boolean;
  allow_proxy: boolean;
  managed?: boolean;
  active_discovery?: boolean;
  rdns_mode?: number;
  [key: string]: unknown;
}

/** An IP range as `GET ipranges/` renders it (api/ipranges.py DISPLAYED_IPRANGE_FIELDS). */
export interface IpRange {
  id: number;
  type: string;
  start_ip: string;
  end_ip: string;
  comment: string | null;
  user?: { username: string } | string | null;
  subnet: { id: number; cidr?: string } | number;
  [key: string]: unknown;
}

export interface RackController {
  system_id: string;
  hostname: string;
  fqdn: string;
  ip_addresses: string[];
  interface_set?: MaasInterface[];
  service_set?: { name: string; status: string; status_info?: string }[];
}

/** `GET rackcontrollers/<id>/?op=list_boot_images` (api/rackcontrollers.py, models/node.py RackController.list_boot_images). */
export interface RackBootImages {
  /** One entry per name (`ubuntu/focal`; a custom image by its own name) and architecture. */
  images: { name: string; architecture: string; subarches: string[] }[];
  /** false: the region could not reach the rack (the images are then empty). */
  connected: boolean;
  /** `synced`, `syncing`, `out-of-sync`, `region-importing` or `unknown`. */
  status: string;
}

/** `GET users/?op=whoami`: the MAAS user behind the API key (api/users.py). */
export interface MaasUser {
  username: string;
  email?: string;
  is_local?: boolean;
  is_superuser: boolean;
}

/** `GET version/` (api/version.py): anonymous. */
export interface MaasVersion {
  version: string;
  subversion?: string;
  capabilities?: string[];
}

/** One row of `GET discovery/` (maasserver/api/discoveries.py, DISPLAYED_DISCOVERY_FIELDS). */
export interface MaasDiscovery {
  discovery_id: string;
  ip: string | null;
  mac_address: string | null;
  mac_organization?: string | null;
  /** When a rack last saw the neighbour (ISO 8601). */
  last_seen: string;
  hostname: string | null;
  fabric_name: string | null;
  vid: number | null;
  /** The rack (or region) interface that saw it. */
  observer: { system_id: string; hostname: string; interface_id: number; interface_name: string };
}

/** One event of `GET events/?op=query` (maasserver/api/events.py, event_to_dict). */
export interface MaasEvent {
  id: number;
  node: string | null;
  hostname: string;
  username?: string | null;
  level: string;
  /** `%a, %d %b. %Y %H:%M:%S` in the region's time zone, e.g. `Tue, 21 Jul. 2026 09:12:31`. */
  created: string;
  /** The event type's description: `Performing PXE boot`, `Commissioning`, … */
  type: string;
  description: string;
}

/** A page of events, newest first; `prev_uri` reads older ones (null when there are none). */
export interface MaasEventPage {
  count: number;
  events: MaasEvent[];
  next_uri: string;
  prev_uri: string | null;
}

export interface EventQuery {
  /** System ids (`id=` repeated). */
  ids: string[];
  /** 1..1000; MAAS answers 400 above 1000. */
  limit: number;
  /** Minimum level (MAAS's default INFO). */
  level?: string;
}

export interface MachineFilter {
  zone?: string;
  pool?: string;
  tags?: string[];
  hostname?: string[];
  id?: string[];
  mac_address?: string[];
}

export interface SubnetDnsUpdate {
  dns_servers: string[];
  allow_dns: boolean;
  allow_proxy: boolean;
  /** Sent as read when known, so the PUT states it (MAAS would keep an omitted one: APIEditMixin). */
  managed?: boolean;
}

/** The typed MAAS calls the jobs use. Errors are MaasApiError (status + MAAS's message). */
export interface MaasClient {
  /** Names the region and key (a digest, never the key): answers about the key may be kept under it. */
  readonly cacheKey?: string;
  listMachines(filter?: MachineFilter): Promise<MaasMachine[]>;
  getMachine(systemId: string): Promise<MaasMachine>;
  /** One bulk call: `GET machines/?op=power_parameters`. */
  powerParameters(systemIds?: string[]): Promise<Record<string, PowerParameters>>;
  listInterfaces(systemId: string): Promise<MaasInterface[]>;
  getInterface(systemId: string, interfaceId: number): Promise<MaasInterface>;
  updateInterfaceMac(systemId: string, interfaceId: number, mac: string): Promise<MaasInterface>;
  markBroken(systemId: string, comment?: string): Promise<MaasMachine>;
  markFixed(systemId: string, comment?: string): Promise<MaasMachine>;
  /** `POST machines/<id>/?op=commission`: an admin action, from New, Ready, Broken or Failed commissioning. */
  commission(systemId: string): Promise<MaasMachine>;
  findDnsResources(fqdn: string): Promise<DnsResource[]>;
  getDnsResource(id: number): Promise<DnsResource>;
  /** Refuses an empty list whoever calls it: an empty PUT wipes the record (PCP-6608). */
  updateDnsResourceIps(id: number, ips: string[]): Promise<DnsResource>;
  listSubnets(): Promise<Subnet[]>;
  getSubnet(id: number): Promise<Subnet>;
  /** Always sends both allow_dns and allow_proxy, as the caller read them (MAAS keeps an omitted field on update, but the PUT says what it means). */
  updateSubnetDns(id: number, update: SubnetDnsUpdate): Promise<Subnet>;
  listRackControllers(): Promise<RackController[]>;
  /** `GET rackcontrollers/<id>/?op=list_boot_images`: an admin method (403 otherwise). */
  listBootImages(systemId: string): Promise<RackBootImages>;
  /** `GET maas/?op=get_config&name=`: a config value as MAAS stores it (any authenticated user). */
  getConfig(name: string): Promise<unknown>;
  listIpRanges(): Promise<IpRange[]>;
  /** `PUT ipranges/<id>/` with the range's own comment: nothing changes, but MAAS 3.7+ starts configure-dhcp on every IP range save (models/iprange.py). */
  resaveIpRange(id: number, comment: string): Promise<IpRange>;
  /** The user behind the API key: mark_broken needs the machine's owner, mark_fixed and interface edits an admin. */
  whoami(): Promise<MaasUser>;
  /** The region's version (`GET version/`): some rules depend on it (NEW takes interface edits from 3.3). */
  version(): Promise<MaasVersion>;
  /** `GET discovery/?op=by_unknown_mac`: neighbours the racks saw whose MAC no interface in MAAS has. */
  unknownMacDiscoveries(): Promise<MaasDiscovery[]>;
  /** `GET discovery/`, streamed and counted (nothing of a row kept): every neighbour the racks saw, known MAC or not. */
  countDiscoveries(): Promise<number>;
  /** `GET events/?op=query`: one page of the given machines' events, newest first. */
  queryEvents(query: EventQuery): Promise<MaasEventPage>;
}
