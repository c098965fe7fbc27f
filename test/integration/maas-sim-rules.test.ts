/**
 * One test per rule of docs/maas-behaviour.md (section "Permissions, commissioning, locks, versions"):
 * each title starts with the rule's id, which the doc names.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { maasOAuthHeader } from '../../src/adapters/maas/oauth-header.ts';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import { Secret } from '../../src/core/secret.ts';
import {
  dnsResource,
  iface,
  machine,
  rackController,
  randomApiKey,
  scenario,
  startMaasSimulator,
  subnet,
  type MaasSimulator,
  type MaasSimulatorOptions,
  type ScenarioInput,
} from '../../lab/maas-sim/index.ts';

let sim: MaasSimulator | undefined;
let client: ClosableMaasClient | undefined;
let key = '';
/** The simulator's clock: MAAS's 30 minutes pass when a test says so. */
let clock = 0;

afterEach(async () => {
  await client?.close();
  await sim?.close();
  sim = undefined;
  client = undefined;
});

const OLD = '52:54:00:00:00:01';
const NEW = '52:54:00:aa:00:01';

async function start(input: ScenarioInput, options: Partial<MaasSimulatorOptions> = {}): Promise<MaasSimulator> {
  key = randomApiKey();
  clock = 0;
  sim = await startMaasSimulator({ scenario: scenario(input), apiKeys: [key], clock: () => clock, ...options });
  client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(key, 'test') }, { retries: 0 });
  return sim;
}

async function raw(method: string, pathAndQuery: string, form?: string): Promise<{ status: number; text: string }> {
  const url = `${(sim as MaasSimulator).url}/api/2.0/${pathAndQuery}`;
  const headers: Record<string, string> = { authorization: maasOAuthHeader(key, { method, url }) };
  if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await request(url, { method: method as 'GET', headers, body: form });
  return { status: res.statusCode, text: await res.body.text() };
}

const m = (over: Parameters<typeof machine>[0]) => machine(over);
const statusOf = (s: MaasSimulator, id: string) => s.state.machines.find((x) => x.system_id === id);

describe('who may do what (no RBAC)', () => {
  const world = (admin: boolean): ScenarioInput => ({
    userIsAdmin: admin,
    machines: [
      m({ system_id: 'aaa001', hostname: 'one', status: 'Broken', macs: [OLD] }),
      m({ system_id: 'bbb002', hostname: 'two', status: 'Ready', macs: ['52:54:00:00:00:02'] }),
    ],
    dnsresources: [dnsResource({ id: 5, fqdn: 'api.maas.example', ips: ['10.0.0.1'] })],
    subnets: [subnet({ id: 9, cidr: '10.20.0.0/24' })],
  });

  it('R-ADMIN-POWER: the bulk power_parameters is for admins only (403 with MAAS\'s message)', async () => {
    await start(world(false));
    const r = await raw('GET', 'machines/?op=power_parameters');
    expect(r).toEqual({ status: 403, text: 'This method is reserved for admin users.' });
    await sim?.close();
    await start(world(true));
    expect((await raw('GET', 'machines/?op=power_parameters')).status).toBe(200);
  });

  it('R-VIEW-MACHINES: a non-admin lists unowned machines and its own only, and reads no one\'s power parameters (a bare 403)', async () => {
    await start({
      userIsAdmin: false,
      user: 'ops',
      machines: [
        m({ system_id: 'own001', hostname: 'mine', status: 'Deployed', owner: 'ops', macs: [OLD] }),
        m({ system_id: 'oth002', hostname: 'theirs', status: 'Deployed', owner: 'alice', macs: ['52:54:00:00:00:02'] }),
        m({ system_id: 'fre003', hostname: 'free', status: 'Ready', macs: ['52:54:00:00:00:03'] }),
      ],
    });
    expect((await client?.listMachines())?.map((x) => x.system_id).sort()).toEqual(['fre003', 'own001']);
    expect(await raw('GET', 'machines/own001/?op=power_parameters')).toEqual({ status: 403, text: '' });
  });

  it('R-ADMIN-IFACE: a machine interface edit needs an admin, even the owner gets 403', async () => {
    const s = await start({ ...world(false), machines: [m({ system_id: 'aaa001', hostname: 'one', status: 'Broken', owner: 'admin', macs: [OLD] })] });
    const id = s.state.machines[0]?.interfaces[0]?.id ?? 0;
    await expect(client?.updateInterfaceMac('aaa001', id, NEW)).rejects.toMatchObject({ status: 403 });
    expect(s.state.machines[0]?.interfaces[0]?.mac_address).toBe(OLD);
  });

  it('R-ADMIN-MARKFIXED: mark_fixed needs an admin', async () => {
    const s = await start({ ...world(false), machines: [m({ system_id: 'aaa001', hostname: 'one', status: 'Broken', owner: 'admin', macs: [OLD] })] });
    await expect(client?.markFixed('aaa001')).rejects.toMatchObject({ status: 403 });
    expect(statusOf(s, 'aaa001')?.status).toBe(8);
  });

  it('R-ADMIN-COMMISSION: commission needs an admin', async () => {
    const s = await start(world(false));
    await expect(client?.commission('aaa001')).rejects.toMatchObject({ status: 403 });
    expect(statusOf(s, 'aaa001')?.status).toBe(8);
  });

  it('R-ADMIN-DNS: PUT dnsresources/<id>/ needs an admin', async () => {
    const s = await start(world(false));
    await expect(client?.updateDnsResourceIps(5, ['10.0.0.9'])).rejects.toMatchObject({ status: 403 });
    expect(s.state.dnsresources[0]?.ip_addresses).toEqual(['10.0.0.1']);
  });

  it('R-ADMIN-SUBNET: PUT subnets/<id>/ needs an admin', async () => {
    const s = await start(world(false));
    await expect(client?.updateSubnetDns(9, { dns_servers: ['10.20.0.9'], allow_dns: true, allow_proxy: true })).rejects.toMatchObject({ status: 403 });
    expect(s.state.subnets[0]?.dns_servers).toEqual([]);
  });

  it('R-WHOAMI: users/?op=whoami names the key\'s user and whether it is a superuser', async () => {
    await start({ ...world(false), user: 'ops' });
    expect(await client?.whoami()).toMatchObject({ username: 'ops', is_superuser: false });
  });

  it('R-OWNER-BROKEN: mark_broken needs the owner, with no exception for an admin', async () => {
    const s = await start({ machines: [m({ system_id: 'aaa001', hostname: 'one', status: 'Failed commissioning', owner: 'carol', macs: [OLD] })] });
    await expect(client?.markBroken('aaa001')).rejects.toMatchObject({ status: 403 });
    expect(statusOf(s, 'aaa001')?.status).toBe(2);
    (statusOf(s, 'aaa001') as { owner: string | null }).owner = 'admin';
    expect((await client?.markBroken('aaa001'))?.status_name).toBe('Broken');
  });
});

describe('commissioning', () => {
  it('R-COMMISSION-STATES: commission starts only from New, Failed commissioning, Ready or Broken (400 otherwise)', async () => {
    const s = await start({ machines: [m({ system_id: 'dep001', hostname: 'dep', status: 'Deployed', macs: [OLD] }), m({ system_id: 'brk001', hostname: 'brk', status: 'Broken', macs: ['52:54:00:00:00:02'] })] });
    const r = await raw('POST', 'machines/dep001/?op=commission', '');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toEqual({ __all__: ['Commission is not available because of the current state of the node.'] });
    expect((await client?.commission('brk001'))?.status_name).toBe('Commissioning');
    expect(statusOf(s, 'dep001')?.status).toBe(6);
  });

  it('R-COMMISSION-OWNER: commissioning sets the owner to the user who started it; Ready clears it', async () => {
    const s = await start({ user: 'ops', machines: [m({ system_id: 'brk001', hostname: 'brk', status: 'Broken', owner: 'carol', macs: [OLD] })] }, { timing: { commissioningMs: 60_000 } });
    expect((await client?.commission('brk001'))?.owner).toBe('ops');
    clock += 60_000;
    const after = await client?.getMachine('brk001');
    expect(after).toMatchObject({ status_name: 'Ready', owner: null });
    expect(statusOf(s, 'brk001')?.owner).toBeNull();
  });

  it('R-COMMISSION-BOOTMAC: commissioning completes only when the boot MAC MAAS records is the live one; otherwise Failed commissioning after node_timeout', async () => {
    await start({
      machines: [
        m({ system_id: 'good01', hostname: 'good', status: 'Broken', macs: [NEW], live_boot_mac: NEW }),
        m({ system_id: 'bad001', hostname: 'bad', status: 'Broken', macs: [OLD], live_boot_mac: NEW.replace('aa', 'bb') }),
      ],
    }, { timing: { commissioningMs: 5 * 60_000 } });
    await client?.commission('good01');
    await client?.commission('bad001');
    clock += 5 * 60_000;
    expect((await client?.getMachine('good01'))?.status_name).toBe('Ready');
    expect((await client?.getMachine('bad001'))?.status_name).toBe('Commissioning');
    clock += 25 * 60_000;
    expect(await client?.getMachine('bad001')).toMatchObject({
      status_name: 'Failed commissioning',
      error_description: "Node operation 'Commissioning' timed out after 30 minutes.",
      owner: 'admin',
    });
  });

  it('R-COMMISSION-MONITOR: without MAAS\'s status monitor an unknown-MAC commissioning never ends (a hang)', async () => {
    await start({ machines: [m({ system_id: 'bad001', hostname: 'bad', status: 'Broken', macs: [OLD], live_boot_mac: NEW })] }, { timing: { statusMonitor: false } });
    await client?.commission('bad001');
    clock += 24 * 60 * 60_000;
    expect((await client?.getMachine('bad001'))?.status_name).toBe('Commissioning');
  });

  it('R-MARKFIXED-PREVIOUS: mark_fixed restores Deployed when previous_status is Deployed (kept through rescue), else Ready', async () => {
    const s = await start({
      machines: [
        m({ system_id: 'res001', hostname: 'rescue', status: 'Failed to enter rescue mode', previous_status: 'Deployed', owner: 'admin', macs: [OLD] }),
        m({ system_id: 'fc0001', hostname: 'failed', status: 'Failed commissioning', owner: 'admin', macs: ['52:54:00:00:00:02'] }),
      ],
    });
    await client?.markBroken('res001');
    expect((await client?.markFixed('res001'))?.status_name).toBe('Deployed');
    expect(statusOf(s, 'res001')).toMatchObject({ osystem: '', distro_series: '' });
    await client?.markBroken('fc0001');
    expect((await client?.markFixed('fc0001'))?.status_name).toBe('Ready');
  });
});

describe('what shows that commissioning can start', () => {
  const rack = (over: Partial<Parameters<typeof rackController>[0]> = {}) => rackController({ system_id: 'rack01', hostname: 'rack-b', ...over });
  const focal = [{ name: 'ubuntu/focal', architecture: 'amd64', subarches: ['hwe-20.04', 'generic'] }];

  it('R-COMMISSION-IMAGES: commission is 400 "Ephemeral operating system ubuntu focal is unavailable." unless every connected rack holds the commissioning release; a disconnected rack does not count, no rack at all refuses', async () => {
    const brk = [m({ system_id: 'brk001', hostname: 'brk', status: 'Broken', macs: [OLD] })];
    const commissioning = { osystem: 'ubuntu', release: 'focal' };
    const s = await start({ commissioning, machines: brk, rackControllers: [rack({ bootImages: focal }), rack({ system_id: 'rack02', hostname: 'rack-c', bootImages: [{ name: 'ubuntu/jammy', architecture: 'amd64', subarches: ['generic'] }] })] });
    expect(await raw('POST', 'machines/brk001/?op=commission', '')).toEqual({ status: 400, text: 'Ephemeral operating system ubuntu focal is unavailable.' });
    s.state.rackControllers[1]!.connected = false;
    expect((await raw('POST', 'machines/brk001/?op=commission', '')).status).toBe(200);
    await client?.close();
    await sim?.close();
    await start({ commissioning, machines: brk, rackControllers: [] });
    expect(await raw('POST', 'machines/brk001/?op=commission', '')).toEqual({ status: 400, text: 'Ephemeral operating system ubuntu focal is unavailable.' });
  });

  it('R-BOOT-IMAGES-API: get_config names the commissioning release; list_boot_images is admin-only, one entry per name and architecture, and {images: [], connected: false} for a rack the region cannot reach', async () => {
    await start({ commissioning: { osystem: 'ubuntu', release: 'focal' }, rackControllers: [rack({ bootImages: focal }), rack({ system_id: 'rack02', hostname: 'rack-c', connected: false })] });
    expect(await client?.getConfig('commissioning_osystem')).toBe('ubuntu');
    expect(await client?.getConfig('commissioning_distro_series')).toBe('focal');
    expect((await raw('GET', 'maas/?op=get_config')).status).toBe(400);
    expect(await client?.listBootImages('rack01')).toEqual({ images: [{ name: 'ubuntu/focal', architecture: 'amd64', subarches: ['generic', 'hwe-20.04'] }], connected: true, status: 'synced' });
    expect(await client?.listBootImages('rack02')).toEqual({ images: [], connected: false, status: 'unknown' });
    expect(await raw('GET', 'rackcontrollers/nope/?op=list_boot_images')).toEqual({ status: 404, text: 'No RackController matches the given query.' });
  });

  it('R-BOOT-IMAGES-API: a non-admin sees no rack controller and may not list boot images (403), but may read get_config', async () => {
    await start({ userIsAdmin: false, rackControllers: [rack({ bootImages: focal })] });
    expect(await client?.listRackControllers()).toEqual([]);
    expect(await raw('GET', 'rackcontrollers/rack01/?op=list_boot_images')).toEqual({ status: 403, text: 'This method is reserved for admin users.' });
    expect(await client?.getConfig('commissioning_distro_series')).toBe('jammy');
  });
});

describe('locks', () => {
  const locked = () => ({ machines: [m({ system_id: 'lck001', hostname: 'locked', status: 'Deployed', owner: 'admin', locked: true, macs: [OLD] })] });

  it('R-LOCK-EDIT: a locked machine refuses interface edits, mark_broken, mark_fixed and commission with 403; JSON shows locked', async () => {
    const s = await start(locked());
    const id = s.state.machines[0]?.interfaces[0]?.id ?? 0;
    expect((await client?.getMachine('lck001'))?.locked).toBe(true);
    await expect(client?.updateInterfaceMac('lck001', id, NEW)).rejects.toMatchObject({ status: 403 });
    await expect(client?.markBroken('lck001')).rejects.toMatchObject({ status: 403 });
    await expect(client?.markFixed('lck001')).rejects.toMatchObject({ status: 403 });
    await expect(client?.commission('lck001')).rejects.toMatchObject({ status: 403 });
    expect(s.state.machines[0]).toMatchObject({ status: 6, interfaces: [expect.objectContaining({ mac_address: OLD })] });
  });

  it('R-LOCK-UNLOCK: op=unlock (owner or admin) lifts it, after which the edit goes through; lock only when Deployed or Deploying', async () => {
    const s = await start(locked());
    const id = s.state.machines[0]?.interfaces[0]?.id ?? 0;
    expect((await raw('POST', 'machines/lck001/?op=unlock', '')).status).toBe(200);
    expect((await raw('POST', 'machines/lck001/?op=unlock', ''))).toEqual({ status: 409, text: 'Machine is not locked' });
    expect((await client?.updateInterfaceMac('lck001', id, NEW))?.mac_address).toBe(NEW);
    s.state.machines[0]!.status = 4;
    expect((await raw('POST', 'machines/lck001/?op=lock', '')).status).toBe(409);
  });
});

describe('interfaces', () => {
  it('R-IFACE-NEW-3.3: a New machine takes interface edits from MAAS 3.3 only; version/ says which', async () => {
    const input = { machines: [m({ system_id: 'new001', hostname: 'new', status: 'New', macs: [OLD] })] };
    let s = await start({ ...input, version: '3.2.9' });
    expect((await client?.version())?.version).toBe('3.2.9');
    let id = s.state.machines[0]?.interfaces[0]?.id ?? 0;
    const refused = await raw('PUT', `nodes/new001/interfaces/${id}/`, `mac_address=${NEW}`);
    expect(refused).toEqual({ status: 409, text: 'Cannot update interface interface because the machine is not Ready, Allocated, or Broken.' });
    await client?.close();
    await sim?.close();
    s = await start({ ...input, version: '3.3.0' });
    id = s.state.machines[0]?.interfaces[0]?.id ?? 0;
    expect((await client?.updateInterfaceMac('new001', id, NEW))?.mac_address).toBe(NEW);
  });

  it('R-IFACE-CHILD-MAC: a VLAN copies its parent\'s new MAC; a bond keeps its own and may take its member\'s', async () => {
    const s = await start({
      machines: [
        m({
          system_id: 'bnd001',
          hostname: 'bonded',
          status: 'Ready',
          interfaces: [
            iface({ name: 'eth0', mac: OLD }),
            iface({ name: 'eth1', mac: '52:54:00:00:00:02' }),
            iface({ name: 'bond0', type: 'bond', mac: OLD, parents: ['eth0', 'eth1'] }),
            iface({ name: 'eth0.10', type: 'vlan', mac: OLD, parents: ['eth0'] }),
          ],
        }),
      ],
    });
    const byName = (n: string) => s.state.machines[0]?.interfaces.find((i) => i.name === n);
    await client?.updateInterfaceMac('bnd001', byName('eth0')?.id ?? 0, NEW);
    expect(byName('eth0.10')?.mac_address).toBe(NEW);
    expect(byName('bond0')?.mac_address).toBe(OLD);
    expect((await client?.updateInterfaceMac('bnd001', byName('bond0')?.id ?? 0, NEW))?.mac_address).toBe(NEW);
    const bond = (await client?.getInterface('bnd001', byName('bond0')?.id ?? 0)) as unknown as { parents: string[] };
    expect(bond.parents).toEqual(['eth0', 'eth1']);
  });
});
