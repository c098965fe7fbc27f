/**
 * What the bot keeps of MAAS's big lists: the fields some check or repair reads (the types in
 * types.ts), nothing else. MAAS 3.4 renders about 14 KB per machine (storage, NUMA, hardware
 * info, test statuses); the shapes below keep well under 1 KB of it.
 *
 * A shape is `true` (keep the value whole), `[shape]` (an array of that), or an object naming the
 * keys to keep, `ANY_KEY` standing for every key (an object keyed by system id).
 */
export type KeptShape = true | readonly [KeptShape] | { readonly [key: string]: KeptShape };

/** Matches every key of an object (MAAS never uses `*` as a key). */
export const ANY_KEY = '*';

const INTERFACE: KeptShape = { id: true, name: true, type: true, mac_address: true, enabled: true, parents: true };

/** `GET machines/` (api/machines.py DISPLAYED_MACHINE_FIELDS): MaasMachine's fields. */
export const MACHINE_LIST: KeptShape = [
  {
    system_id: true,
    hostname: true,
    fqdn: true,
    status: true,
    status_name: true,
    power_type: true,
    power_state: true,
    zone: { name: true },
    pool: { name: true },
    tag_names: true,
    ip_addresses: true,
    boot_interface: INTERFACE,
    interface_set: [INTERFACE],
    owner: true,
    error_description: true,
    status_message: true,
    locked: true,
    architecture: true,
  },
];

/** `GET machines/?op=power_parameters` (api/machines.py power_parameters): by system id, the two fields mac-diff reads. */
export const POWER_PARAMETERS: KeptShape = { [ANY_KEY]: { power_address: true, power_id: true } };

/** `GET discovery/?op=by_unknown_mac` (api/discoveries.py DISPLAYED_DISCOVERY_FIELDS): MaasDiscovery's fields. */
export const DISCOVERY_LIST: KeptShape = [
  {
    discovery_id: true,
    ip: true,
    mac_address: true,
    mac_organization: true,
    last_seen: true,
    hostname: true,
    fabric_name: true,
    vid: true,
    observer: { system_id: true, hostname: true, interface_id: true, interface_name: true },
  },
];

/** `GET discovery/` read only to count it: an empty object per row, so a long list costs a few bytes kept. */
export const COUNT_ONLY: KeptShape = [{}];

/** `GET events/?op=query` (api/events.py): the page and MaasEvent's fields. */
export const EVENT_PAGE: KeptShape = {
  count: true,
  next_uri: true,
  prev_uri: true,
  events: [{ id: true, node: true, hostname: true, username: true, level: true, created: true, type: true, description: true }],
};
