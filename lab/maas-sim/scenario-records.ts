/**
 * The records a scenario holds for the DHCP, discovery and event routes: plain data, kept apart
 * from the routes that serve them so that the scenario and its routes do not import each other.
 */

export interface SimIpRange {
  id: number;
  type: 'dynamic' | 'reserved';
  subnet: number;
  start_ip: string;
  end_ip: string;
  comment: string;
  /** The username that owns it (MAAS: whoever created it). */
  user: string;
}

/** One rack that serves DHCP (its VLAN has dhcp_on), and the dhcpd.conf the simulator writes for it. */
export interface SimDhcpRack {
  /** The rack's address on the subnets it serves: MAAS hands it out first while allow_dns is on. */
  ip: string;
  subnetIds: number[];
  /** A real file: the rack's SSH server reads it with cat. */
  configPath: string;
}

/**
 * When a subnet's DNS fields change, the scenario's MAAS version decides: up to 3.6 a database
 * trigger (maasserver/triggers/system.py sys_dhcp_subnet_update) rewrites the rack's config on a
 * dns_servers / allow_dns / managed / gateway change; from 3.7 models/signals/subnet.py starts
 * configure-dhcp only on create, delete and a VLAN move, so the file keeps the old servers.
 */
export interface SimDhcp {
  /** The region's address the racks would give nodes last (get_default_dns_servers). */
  regionIp: string;
  racks: SimDhcpRack[];
  /** How many times each rack's file was written (start included). */
  writes?: number;
  /** Before 3.7: how long after the subnet edit the rack applies the trigger's notification (default at once). */
  triggerDelayMs?: number;
}

export interface SimDiscovery {
  ip: string | null;
  mac_address: string;
  mac_organization: string | null;
  /** ISO 8601, as Django's JSON encoder prints an aware datetime (`2026-07-21T09:12:31.000Z`). */
  last_seen: string;
  hostname: string | null;
  fabric_name: string;
  vid: number | null;
  observer: { system_id: string; hostname: string; interface_id: number; interface_name: string };
}

export interface SimEvent {
  id: number;
  /** system_id of the node. */
  node: string;
  hostname: string;
  username: string | null;
  level: string;
  /** ISO 8601; served formatted as MAAS formats it. */
  created: string;
  /** The event type's description. */
  type: string;
  description: string;
}
