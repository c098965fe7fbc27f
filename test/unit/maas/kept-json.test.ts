import { describe, expect, it } from 'vitest';
import { KeptTooLargeError, NotJsonError, readKeptJson } from '../../../src/adapters/maas/kept-json.ts';
import { EVENT_PAGE, MACHINE_LIST, POWER_PARAMETERS, type KeptShape } from '../../../src/adapters/maas/kept-shapes.ts';

/** The body in pieces of `size` bytes: tokens, keys and multi-byte characters are cut across pieces. */
async function* pieces(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const iface = (id: number, mac: string) => ({
  id,
  name: `ens${id}`,
  type: 'physical',
  mac_address: mac,
  enabled: true,
  parents: [],
  links: [{ id: 9, mode: 'auto', subnet: { id: 2, cidr: '10.99.0.0/24', vlan: { id: 5001, fabric: 'fabric-0' } } }],
  vlan: { id: 5001, name: 'untagged', fabric: 'fabric-0' },
  numa_node: 0,
  link_speed: 0,
});

/** A machine as MAAS renders it: the fields a check reads among many it does not. */
const machine = (n: number) => ({
  system_id: `m${n}`,
  hostname: `näme-${n}`,
  fqdn: `näme-${n}.maas`,
  status: 4,
  status_name: 'Ready',
  status_message: null,
  power_type: 'virsh',
  power_state: 'off',
  zone: { id: 2, name: 'east-dc', description: '', resource_uri: '/MAAS/api/2.0/zones/east-dc/' },
  pool: { id: 1, name: 'default', description: 'Default pool', resource_uri: '/MAAS/api/2.0/resourcepool/1/' },
  tag_names: ['virsh-lab'],
  ip_addresses: [],
  owner: null,
  locked: false,
  boot_interface: iface(1, `52:54:00:00:00:${n.toString(16).padStart(2, '0')}`),
  interface_set: [iface(1, `52:54:00:00:00:${n.toString(16).padStart(2, '0')}`), iface(2, '52:54:00:aa:bb:cc')],
  blockdevice_set: [{ id: 1, name: 'sda', size: 10737418240, model: 'QEMU HARDDISK', partitions: [{ id: 1, filesystem: { fstype: 'ext4' } }] }],
  hardware_info: { system_vendor: 'QEMU', cpu_model: 'Intel Core Processor (Skylake, IBRS)', mainboard_vendor: 'Unknown' },
  numanode_set: [{ index: 0, memory: 2048, cores: [0, 1] }],
  cpu_count: 2,
  memory: 2048,
  testing_status_name: 'Passed',
});

const pretty = (value: unknown) => JSON.stringify(value, null, 4);

describe('readKeptJson: a MAAS list read as a stream, keeping only what the shape names', () => {
  it('keeps exactly the fields a check reads of every machine, whatever the pieces the body arrives in', async () => {
    const body = pretty([machine(1), machine(2), machine(3)]);
    for (const size of [1, 7, 64 * 1024]) {
      const kept = await readKeptJson(pieces(body, size), MACHINE_LIST, 1 << 20);
      const machines = kept.value as Record<string, unknown>[];
      expect(kept.items).toBe(3);
      expect(kept.bytesRead).toBe(Buffer.byteLength(body));
      expect(machines.map((m) => m.hostname)).toEqual(['näme-1', 'näme-2', 'näme-3']);
      expect(Object.keys(machines[0]!).sort()).toEqual(
        ['boot_interface', 'fqdn', 'hostname', 'interface_set', 'ip_addresses', 'locked', 'owner', 'pool', 'power_state', 'power_type', 'status', 'status_message', 'status_name', 'system_id', 'tag_names', 'zone'].sort(),
      );
      expect(machines[1]!.interface_set).toEqual([
        { id: 1, name: 'ens1', type: 'physical', mac_address: '52:54:00:00:00:02', enabled: true, parents: [] },
        { id: 2, name: 'ens2', type: 'physical', mac_address: '52:54:00:aa:bb:cc', enabled: true, parents: [] },
      ]);
      expect(machines[2]!.zone).toEqual({ name: 'east-dc' });
      expect(machines[0]!.status).toBe(4);
    }
  });

  it('keeps a small fraction of the rendered bytes', async () => {
    const body = pretty(Array.from({ length: 50 }, (_v, n) => machine(n)));
    const kept = await readKeptJson(pieces(body, 4096), MACHINE_LIST, 1 << 20);
    expect(kept.keptBytes).toBeLessThan(Buffer.byteLength(body) / 4);
    // What it counts is the JSON size of what it returns (within a few bytes per value).
    expect(Math.abs(kept.keptBytes - JSON.stringify(kept.value).length)).toBeLessThan(kept.keptBytes / 10);
  });

  it('a machine MAAS renders without a boot interface keeps its null', async () => {
    const body = JSON.stringify([{ ...machine(1), boot_interface: null }]);
    const [m] = (await readKeptJson(pieces(body, 5), MACHINE_LIST, 1 << 20)).value as Record<string, unknown>[];
    expect(m!.boot_interface).toBeNull();
  });

  it('power parameters keep power_address and power_id by system id, never a secret', async () => {
    const body = pretty({
      dkbytq: { power_address: 'qemu+ssh://ubuntu@127.0.0.2/system', power_pass: 'virshcanary', power_id: 'east-e01' },
      p1pmi0: { power_address: '10.9.9.9', power_user: 'root', power_pass: 'P@ss;w0rd', k_g: 'kg-canary' },
    });
    const kept = await readKeptJson(pieces(body, 3), POWER_PARAMETERS, 1 << 20);
    expect(kept.value).toEqual({ dkbytq: { power_address: 'qemu+ssh://ubuntu@127.0.0.2/system', power_id: 'east-e01' }, p1pmi0: { power_address: '10.9.9.9' } });
  });

  it('a secret-named key is dropped even where the shape keeps a value whole', async () => {
    const shape: KeptShape = { power_parameters: true, power_pass: true };
    const body = JSON.stringify({ power_parameters: { power_address: 'a', nested: [{ password: 'x1', power_token_secret: 'x2' }] }, power_pass: 'x3' });
    const kept = await readKeptJson(pieces(body, 2), shape, 1 << 20);
    expect(kept.value).toEqual({ power_parameters: { power_address: 'a', nested: [{}] } });
  });

  it('an event page keeps its links and each event\'s fields', async () => {
    const event = { id: 7, node: 'm1', hostname: 'n1', username: null, level: 'INFO', created: 'Tue, 21 Jul. 2026 09:12:31', type: 'Commissioning', description: '', action: 'x', resource_uri: '/e/7' };
    const body = pretty({ count: 1, events: [event], next_uri: '/n', prev_uri: null });
    const kept = await readKeptJson(pieces(body, 11), EVENT_PAGE, 1 << 20);
    const { action: _action, resource_uri: _uri, ...fields } = event;
    expect(kept.value).toEqual({ count: 1, events: [fields], next_uri: '/n', prev_uri: null });
  });

  it('stops as soon as what is kept passes the cap, saying how many entries were read', async () => {
    const body = pretty(Array.from({ length: 200 }, (_v, n) => machine(n)));
    let pulled = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const piece of pieces(body, 1024)) {
        pulled += piece.length;
        yield piece;
      }
    }
    const err = await readKeptJson(counted(), MACHINE_LIST, 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeptTooLargeError);
    const { items, maxKeptBytes } = err as KeptTooLargeError;
    expect(maxKeptBytes).toBe(10_000);
    expect(items).toBeGreaterThan(5);
    expect(items).toBeLessThan(40);
    expect(pulled).toBeLessThan(Buffer.byteLength(body) / 4);
  });

  it('a body that is not JSON, or ends before its JSON does, is NotJsonError', async () => {
    await expect(readKeptJson(pieces('<html>502 Bad Gateway</html>', 8), MACHINE_LIST, 1 << 20)).rejects.toBeInstanceOf(NotJsonError);
    const cut = pretty([machine(1), machine(2)]).slice(0, 900);
    await expect(readKeptJson(pieces(cut, 100), MACHINE_LIST, 1 << 20)).rejects.toBeInstanceOf(NotJsonError);
  });
});
