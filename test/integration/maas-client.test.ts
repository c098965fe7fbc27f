import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MaasRegionConfig } from '../../src/core/config.ts';
import { ChatopsError, describeError } from '../../src/core/errors.ts';
import { createMaasClient, type ClosableMaasClient, type MaasClientOptions, type MaasRequestInfo } from '../../src/adapters/maas/client.ts';
import { isClockSkew, MaasApiError } from '../../src/adapters/maas/maas-api-error.ts';
import { NODE_STATUS, statusName } from '../../src/adapters/maas/node-status.ts';
import { Secret } from '../../src/core/secret.ts';
import {
  dnsResource,
  INTERFACE_STATE_CONFLICT,
  machine,
  rackController,
  randomApiKey,
  scenario,
  startMaasSimulator,
  subnet,
  virshPower,
  type MaasSimulator,
} from '../../lab/maas-sim/index.ts';

const FAST: MaasClientOptions = { backoffMs: 1, timeoutMs: 5_000 };

function labScenario() {
  return scenario({
    machines: [
      machine({
        system_id: 'dep001',
        hostname: 'node-deployed',
        status: 'Deployed',
        zone: 'site-b',
        tags: ['k8s', 'cp'],
        macs: ['52:54:00:00:01:01'],
        ip_addresses: ['10.11.135.36'],
        power: virshPower('172.16.1.28', 'vm-deployed'),
      }),
      machine({ system_id: 'fc0002', hostname: 'node-failed', status: 'Failed commissioning', zone: 'site-b', tags: ['k8s'], macs: ['52:54:00:00:02:01'], power: virshPower('172.16.1.28', 'vm-failed') }),
      machine({ system_id: 'rdy003', hostname: 'node-ready', status: 'Ready', zone: 'site-b', macs: ['52:54:00:00:03:01', '52:54:00:00:03:02'] }),
      machine({ system_id: 'com004', hostname: 'node-busy', status: 'Commissioning', zone: 'site-a', macs: ['52:54:00:00:04:01'] }),
    ],
    dnsresources: [dnsResource({ id: 11, fqdn: 'prod-k8s.maas.example', ips: ['10.11.135.36'] })],
    subnets: [subnet({ id: 3, cidr: '10.20.0.0/24', dns_servers: ['10.20.0.2'] }), subnet({ id: 4, cidr: '10.11.135.0/24' })],
    rackControllers: [rackController({ system_id: 'rack01', hostname: 'rack-b', ip_addresses: ['10.20.0.2'], macs: ['52:54:00:00:99:01'] })],
  });
}

let sim: MaasSimulator;
let key: string;
const clients: ClosableMaasClient[] = [];

function client(options: MaasClientOptions = FAST, apiKey = key, url = sim.url): ClosableMaasClient {
  const region: MaasRegionConfig = { name: 'region-a', url, apiKey: new Secret(apiKey, 'test') };
  const c = createMaasClient(region, options);
  clients.push(c);
  return c;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

beforeEach(async () => {
  key = randomApiKey();
  sim = await startMaasSimulator({ scenario: labScenario(), apiKeys: [key] });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await sim.close();
});

describe('auth', () => {
  it('is accepted with the PLAINTEXT signature of the configured key', async () => {
    const machines = await client().listMachines();
    expect(machines.map((m) => m.system_id)).toEqual(['dep001', 'fc0002', 'rdy003', 'com004']);
    expect(sim.calls).toHaveLength(1);
    expect(sim.calls[0]).toMatchObject({ method: 'GET', path: '/MAAS/api/2.0/machines/', status: 200 });
  });

  it('a bad key is a MaasApiError 401 that says so in its own words, not retried', async () => {
    const err = await failure(client(FAST, randomApiKey()).listMachines());
    expect(err).toBeInstanceOf(MaasApiError);
    expect(err).toMatchObject({ code: 'MAAS_HTTP', status: 401, body: 'MAAS does not know the API key (its consumer key)', method: 'GET', path: 'machines/' });
    expect((err as MaasApiError).describe()).toMatch(/maas\.region-a\.apiKey/);
    expect(sim.calls).toHaveLength(1);
  });

  it.each([
    ['ahead of', 420],
    ['behind', -600],
  ])('a region clock %s this host by more than 300 s: 401 Expired timestamp reads as clock skew with its offset (Date header) and NTP, not as the key', async (word, offsetS) => {
    sim.setWallClockOffset(offsetS * 1000);
    const err = await failure(client().listMachines());
    expect(err).toBeInstanceOf(MaasApiError);
    const api = err as MaasApiError;
    expect(api).toMatchObject({ status: 401, auth: { kind: 'expired-timestamp' } });
    expect(isClockSkew(api)).toBe(true);
    // The Date header has whole seconds: the offset read may be one short of the one set.
    expect(Math.abs((api.clockOffsetS ?? 0) - offsetS)).toBeLessThanOrEqual(1);
    const text = api.describe();
    expect(text).toContain(`Clock skew, not the API key: MAAS refuses OAuth timestamps more than 300 s from its own clock. MAAS's clock is ${Math.abs(api.clockOffsetS ?? 0)} s ${word} this host's (read from its answer). Fix the time (NTP) on this host or on the region`);
    expect(text).not.toMatch(/apiKey|maas apikey/);
    expect(sim.calls.map((c) => c.status)).toEqual([401]);
  });

  it('a region clock 200 s off is within MAAS\'s threshold: the call succeeds', async () => {
    sim.setWallClockOffset(200_000);
    expect((await client().listMachines()).length).toBeGreaterThan(0);
  });
});

describe('retries', () => {
  it('retries a 503 and then succeeds', async () => {
    sim.injectFaults({ status: 503, count: 2 });
    const seen: MaasRequestInfo[] = [];
    const subnets = await client({ ...FAST, onRequest: (info) => seen.push(info) }).listSubnets();
    expect(subnets.map((s) => s.id)).toEqual([3, 4]);
    expect(sim.calls.map((c) => c.status)).toEqual([503, 503, 200]);
    expect(seen.map((i) => i.status)).toEqual([503, 503, 200]);
    expect(seen.every((i) => i.method === 'GET' && i.path === 'subnets/')).toBe(true);
  });

  it('gives up after retries + 1 attempts with the last MAAS error', async () => {
    sim.injectFaults({ status: 500, count: 10 });
    const err = await failure(client({ ...FAST, retries: 2 }).getSubnet(3));
    expect(err).toMatchObject({ status: 500, path: 'subnets/3/' });
    expect(sim.calls).toHaveLength(3);
  });

  it('does not retry a 409', async () => {
    const err = await failure(client().updateInterfaceMac('com004', sim.state.machines[3]!.interfaces[0]!.id, '52:54:00:aa:00:01'));
    expect(err).toMatchObject({ status: 409, body: INTERFACE_STATE_CONFLICT });
    expect(sim.calls).toHaveLength(1);
  });

  it('retries a dropped connection for a GET', async () => {
    sim.injectFaults({ drop: true, count: 1 });
    const params = await client().powerParameters();
    expect(Object.keys(params)).toHaveLength(4);
    expect(sim.calls).toHaveLength(2);
  });

  it('does not repeat a POST op whose connection dropped: it may have run', async () => {
    sim.injectFaults({ drop: true, count: 1, path: /op=mark_broken/ });
    const err = await failure(client().markBroken('fc0002'));
    expect(err).toMatchObject({ code: 'MAAS_UNREACHABLE' });
    expect(sim.calls).toHaveLength(1);
  });

  it('sends a write once, even answered 503: the step reads what happened', async () => {
    sim.injectFaults({ status: 503, count: 1, path: /op=mark_broken/ });
    const err = await failure(client().markBroken('fc0002'));
    expect(err).toMatchObject({ status: 503 });
    expect(sim.calls.map((c) => c.status)).toEqual([503]);
  });

  it('a slow MAAS gets a PUT once: the headers timeout is not followed by a copy (issue 27 item 7)', async () => {
    sim.setLatency(1_500);
    const err = await failure(client({ ...FAST, timeoutMs: 100, retries: 2 }).updateDnsResourceIps(11, ['10.0.0.9']));
    expect(err).toMatchObject({ code: 'MAAS_UNREACHABLE' });
    expect(sim.calls.filter((c) => c.method === 'PUT')).toHaveLength(1);
  });

  it('each attempt of a read is signed afresh: a repeat after a lost answer is not "Nonce already used"', async () => {
    // The first answer is lost after MAAS committed the request (its nonce is spent); the repeat must carry a new nonce.
    sim.injectFaults({ dropAfterCommit: true, count: 1, path: /users\/\?op=whoami/ });
    const user = await client().whoami();
    expect(user.username).toBe(sim.state.user);
    expect(sim.calls.map((c) => c.status)).toEqual([0, 200]);
    expect(new Set(sim.calls.map((c) => c.nonce)).size).toBe(2);
  });

  it('a slow MAAS is a timeout error naming the region, URL and call', async () => {
    sim.setLatency(3_000);
    const err = await failure(client({ ...FAST, timeoutMs: 100, retries: 1 }).listRackControllers());
    expect(err).toBeInstanceOf(ChatopsError);
    expect(err).toMatchObject({ code: 'MAAS_UNREACHABLE' });
    const text = describeError(err);
    expect(text).toContain(`MAAS region-a at ${sim.url} did not answer GET rackcontrollers/ within 100ms (2 attempts)`);
    expect(text).toMatch(/maas\.region-a\.url/);
    expect(sim.calls).toHaveLength(2);
  });

  it('a refused connection is MAAS_UNREACHABLE with the URL and the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const url = `http://127.0.0.1:${port}/MAAS`;
    const seen: MaasRequestInfo[] = [];
    const err = await failure(client({ ...FAST, onRequest: (i) => seen.push(i) }, key, url).listMachines());
    expect(err).toMatchObject({ code: 'MAAS_UNREACHABLE' });
    expect((err as ChatopsError).message).toContain(`MAAS region-a at ${url} is unreachable`);
    expect((err as ChatopsError).message).toContain('ECONNREFUSED');
    expect((err as ChatopsError).hint).toBeTruthy();
    expect(seen.map((i) => i.status)).toEqual([0, 0, 0]);
  });
});

describe('connections', () => {
  it('a scan of many calls reuses a few kept-alive connections', async () => {
    const c = client();
    for (let round = 0; round < 3; round++) {
      for (const m of await c.listMachines()) await c.listInterfaces(m.system_id);
      await c.powerParameters();
    }
    expect(sim.calls).toHaveLength(18);
    // undici's pool may open a second socket while the first is finishing its response.
    expect(sim.connections).toBeLessThanOrEqual(2);
  });
});

describe('machines', () => {
  it('sends filters as query parameters, repeating the list ones', async () => {
    const c = client();
    expect((await c.listMachines({ zone: 'site-b', tags: ['k8s', 'cp'] })).map((m) => m.system_id)).toEqual(['dep001']);
    expect((await c.listMachines({ zone: 'site-b', tags: ['k8s'] })).map((m) => m.system_id)).toEqual(['dep001', 'fc0002']);
    expect((await c.listMachines({ hostname: ['node-ready', 'node-busy'] })).map((m) => m.system_id)).toEqual(['rdy003', 'com004']);
    expect((await c.listMachines({ id: ['com004', 'dep001'] })).map((m) => m.system_id)).toEqual(['dep001', 'com004']);
    expect((await c.listMachines({ mac_address: ['52-54-00-00-03-02'] })).map((m) => m.system_id)).toEqual(['rdy003']);
    expect(sim.calls[0]?.query).toEqual({ zone: ['site-b'], tags: ['k8s', 'cp'] });
    expect(sim.calls[2]?.query).toEqual({ hostname: ['node-ready', 'node-busy'] });
  });

  it('an unknown zone is MAAS\'s 400, not an empty list', async () => {
    const err = await failure(client().listMachines({ zone: 'nowhere' }));
    expect(err).toMatchObject({ status: 400 });
    expect((err as MaasApiError).body).toContain('No such zone(s): nowhere.');
  });

  it('returns the MAAS machine shape', async () => {
    const m = await client().getMachine('dep001');
    expect(m).toMatchObject({
      system_id: 'dep001',
      hostname: 'node-deployed',
      fqdn: 'node-deployed.maas',
      status: 6,
      status_name: 'Deployed',
      power_type: 'virsh',
      power_state: 'on',
      zone: { name: 'site-b' },
      pool: { name: 'default' },
      tag_names: ['k8s', 'cp'],
      ip_addresses: ['10.11.135.36'],
      boot_interface: { name: 'eth0', mac_address: '52:54:00:00:01:01', type: 'physical' },
    });
    expect(m.interface_set).toHaveLength(1);
  });

  it('power parameters are one call for all machines, or for those asked', async () => {
    const c = client();
    const all = await c.powerParameters();
    expect(all.dep001).toMatchObject({ power_address: 'qemu+ssh://ubuntu@172.16.1.28/system', power_id: 'vm-deployed' });
    expect(Object.keys(all)).toEqual(['dep001', 'fc0002', 'rdy003', 'com004']);
    const some = await c.powerParameters(['fc0002', 'dep001']);
    expect(Object.keys(some).sort()).toEqual(['dep001', 'fc0002']);
    expect(sim.calls.map((call) => call.query)).toEqual([{ op: ['power_parameters'] }, { op: ['power_parameters'], id: ['fc0002', 'dep001'] }]);
  });

  it('a missing machine is a 404 with MAAS\'s text', async () => {
    const err = await failure(client().getMachine('nope'));
    expect(err).toMatchObject({ status: 404, body: 'No Machine matches the given query.' });
  });
});

describe('interface MAC updates: the state rule (api/interfaces.py)', () => {
  const editable = new Set<number>([NODE_STATUS.NEW, NODE_STATUS.READY, NODE_STATUS.ALLOCATED, NODE_STATUS.BROKEN, NODE_STATUS.FAILED_TESTING, NODE_STATUS.DEPLOYED]);
  const table = Array.from({ length: 23 }, (_, code) => [statusName(code), code, editable.has(code)] as const);

  it.each(table)('%s (%i): allowed=%s', async (_name, code, allowed) => {
    const target = sim.state.machines[2]!;
    target.status = code;
    const interfaceId = target.interfaces[0]!.id;
    const call = client().updateInterfaceMac('rdy003', interfaceId, '52:54:00:AB:00:01');
    if (allowed) {
      await expect(call).resolves.toMatchObject({ id: interfaceId, mac_address: '52:54:00:ab:00:01' });
      expect(target.interfaces[0]?.mac_address).toBe('52:54:00:ab:00:01');
    } else {
      await expect(call).rejects.toMatchObject({ status: 409, body: INTERFACE_STATE_CONFLICT });
      expect(target.interfaces[0]?.mac_address).toBe('52:54:00:00:03:01');
    }
    expect(sim.calls).toHaveLength(1);
    expect(sim.calls[0]?.form).toEqual({ mac_address: ['52:54:00:AB:00:01'] });
  });

  it('a MAC another interface holds is MAAS\'s 400, naming the holder', async () => {
    const err = await failure(client().updateInterfaceMac('rdy003', sim.state.machines[2]!.interfaces[0]!.id, '52:54:00:00:02:01'));
    expect(err).toMatchObject({ status: 400 });
    expect(JSON.parse((err as MaasApiError).body)).toEqual({ mac_address: ['This MAC address is already in use by eth0 (physical) on node-failed.'] });
  });

  it('a malformed MAC is a 400', async () => {
    const err = await failure(client().updateInterfaceMac('rdy003', sim.state.machines[2]!.interfaces[0]!.id, 'not-a-mac'));
    expect(JSON.parse((err as MaasApiError).body)).toEqual({ mac_address: ["'not-a-mac' is not a valid MAC address."] });
  });

  it('reads back the interface it wrote', async () => {
    const c = client();
    const id = sim.state.machines[2]!.interfaces[1]!.id;
    await c.updateInterfaceMac('rdy003', id, '52:54:00:ab:00:02');
    expect(await c.getInterface('rdy003', id)).toMatchObject({ id, name: 'eth1', mac_address: '52:54:00:ab:00:02' });
    expect((await c.listInterfaces('rdy003')).map((i) => i.mac_address)).toEqual(['52:54:00:00:03:01', '52:54:00:ab:00:02']);
  });
});

describe('mark_broken / mark_fixed (models/node.py)', () => {
  it.each([
    ['Failed commissioning', 'Ready', 'fc0002'],
    ['Ready', 'Ready', 'rdy003'],
    ['Deployed', 'Deployed', 'dep001'],
    ['Allocated', 'Ready', 'rdy003'],
    ['Deploying', 'Ready', 'rdy003'],
    ['Commissioning', 'Ready', 'com004'],
  ])('%s → Broken → %s', async (from, after, systemId) => {
    const m = sim.state.machines.find((x) => x.system_id === systemId)!;
    m.status = NODE_STATUS[from.toUpperCase().replace(/ /g, '_') as keyof typeof NODE_STATUS];
    m.owner = 'admin';
    m.power_state = 'on';
    const c = client();
    const broken = await c.markBroken(systemId, 'MAC drift repair');
    expect(broken).toMatchObject({ status: NODE_STATUS.BROKEN, status_name: 'Broken' });
    const releasable = ['Deployed', 'Allocated', 'Deploying'].includes(from);
    // A releasable machine is released first, which powers it off.
    expect(broken.power_state).toBe(releasable ? 'off' : 'on');
    expect(sim.calls[0]?.form).toEqual({ comment: ['MAC drift repair'] });
    const fixed = await c.markFixed(systemId);
    expect(fixed.status_name).toBe(after);
    // mark_broken clears the owner, and mark_fixed gives none back, Deployed included (3.4.10 row mark_fixed-after-owner-broken).
    expect(m.owner).toBeNull();
  });

  it('mark_fixed on a machine that is not Broken is MAAS\'s 409', async () => {
    const err = await failure(client().markFixed('rdy003'));
    expect(err).toMatchObject({ status: 409, body: "Can't mark a non-broken node as 'Ready'." });
  });

  it('mark_broken needs the machine to be owned by the API user (else 403)', async () => {
    sim.state.machines[1]!.owner = 'someone-else';
    const err = await failure(client().markBroken('fc0002'));
    expect(err).toMatchObject({ status: 403 });
    expect(sim.state.machines[1]?.status).toBe(NODE_STATUS.FAILED_COMMISSIONING);
  });

  it('mark_broken leaves the machine without an owner, so nobody may mark it broken again (403; 3.4.10 rows mark_broken-owner, get-machine)', async () => {
    const c = client();
    expect((await c.markBroken('dep001')).owner).toBeNull();
    expect(await failure(c.markBroken('dep001'))).toMatchObject({ status: 403 });
    expect((await c.markFixed('dep001')).status_name).toBe('Deployed');
  });

  it('the Failed commissioning repair: mark_broken → PUT mac → mark_fixed ends Ready with the new MAC', async () => {
    const c = client();
    const id = sim.state.machines[1]!.interfaces[0]!.id;
    await expect(c.updateInterfaceMac('fc0002', id, '52:54:00:fe:00:01')).rejects.toMatchObject({ status: 409 });
    await c.markBroken('fc0002');
    await c.updateInterfaceMac('fc0002', id, '52:54:00:fe:00:01');
    const fixed = await c.markFixed('fc0002');
    expect(fixed).toMatchObject({ status_name: 'Ready', boot_interface: { mac_address: '52:54:00:fe:00:01' } });
  });
});

describe('DNS resources', () => {
  it('finds by fqdn and sends the new set as ONE space-separated ip_addresses value', async () => {
    const c = client();
    const [record] = await c.findDnsResources('prod-k8s.maas.example');
    expect(record).toMatchObject({ id: 11, fqdn: 'prod-k8s.maas.example', ip_addresses: [{ ip: '10.11.135.36' }] });
    const updated = await c.updateDnsResourceIps(11, ['10.11.135.36', '10.11.135.37']);
    expect(updated.ip_addresses.map((a) => a.ip)).toEqual(['10.11.135.36', '10.11.135.37']);
    expect(sim.calls[1]?.form).toEqual({ ip_addresses: ['10.11.135.36 10.11.135.37'] });
    expect((await c.getDnsResource(11)).ip_addresses).toHaveLength(2);
  });

  it('refuses an empty set itself: zero requests', async () => {
    const err = await failure(client().updateDnsResourceIps(11, []));
    expect(err).toMatchObject({ code: 'GUARD_REFUSED' });
    expect(sim.calls).toHaveLength(0);
    expect(sim.state.dnsresources[0]?.ip_addresses).toEqual(['10.11.135.36']);
  });

  it('an fqdn with no record is an empty list; one in a domain MAAS does not know is a 404', async () => {
    const c = client();
    expect(await c.findDnsResources('other.maas.example')).toEqual([]);
    await expect(c.findDnsResources('x.unknown.example')).rejects.toMatchObject({ status: 404, body: 'No Domain matches the given query.' });
  });
});

describe('subnets and racks', () => {
  it('a DNS update sends dns_servers, allow_dns and allow_proxy, and keeps allow_proxy as asked', async () => {
    sim.state.subnets[0]!.allow_proxy = false;
    const updated = await client().updateSubnetDns(3, { dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy: false });
    expect(updated).toMatchObject({ id: 3, dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy: false });
    expect(sim.calls[0]?.form).toEqual({ dns_servers: ['10.20.0.53'], allow_dns: ['false'], allow_proxy: ['false'] });
  });

  it('lists subnets and rack controllers in MAAS shapes', async () => {
    const c = client();
    expect((await c.listSubnets()).map((s) => [s.id, s.cidr, s.allow_dns])).toEqual([
      [3, '10.20.0.0/24', true],
      [4, '10.11.135.0/24', true],
    ]);
    const [rack] = await c.listRackControllers();
    expect(rack).toMatchObject({ system_id: 'rack01', hostname: 'rack-b', fqdn: 'rack-b.maas', ip_addresses: ['10.20.0.2'] });
    expect(rack?.service_set?.map((s) => s.name)).toContain('rackd');
  });
});

describe('secrets', () => {
  it('the API key never appears in an error, whatever went wrong', async () => {
    const [consumer, token, secret] = key.split(':') as [string, string, string];
    const errors: unknown[] = [];
    errors.push(await failure(client(FAST, `${consumer}:${token}:wrong-secret-value`).listMachines()));
    errors.push(await failure(client(FAST, `${consumer}:unknownTokenKey123:${secret}`).listMachines()));
    errors.push(await failure(client().getMachine('nope')));
    errors.push(await failure(client().markFixed('rdy003')));
    sim.setLatency(2_000);
    errors.push(await failure(client({ ...FAST, timeoutMs: 50, retries: 0 }).listSubnets()));
    sim.setLatency(0);
    // MAAS echoes the token key of an unknown token: the client must scrub it.
    expect((errors[1] as MaasApiError).body).toBe("MAAS does not know the API key's token (it was deleted, or the key is from another region)");
    // MAAS answers a wrong secret with the real one ("Expected signature base string: &<secret>"): never shown.
    expect((errors[0] as MaasApiError).body).toMatch(/token secret is not the one MAAS holds/);
    for (const err of errors) {
      const shown = [describeError(err), inspect(err, { depth: 5 }), JSON.stringify(err), String((err as Error).stack)].join('\n');
      for (const part of [key, consumer, token, secret, 'unknownTokenKey123', 'wrong-secret-value']) expect(shown).not.toContain(part);
    }
  });
});

describe('secrets in MAAS bodies are removed by key', () => {
  const echoed = { power_type: 'ipmi', power_parameters: { power_address: '10.9.9.9', power_user: 'root', power_pass: 'P@ss;w0rd', k_g: 'kg-canary-1' }, password: 'a b c d', token: 'ADMIN' };

  it('a 500 whose JSON body echoes power parameters keeps MAAS\'s words but none of the secrets', async () => {
    sim.injectFaults({ status: 500, count: 3, body: { error: 'power query failed', request: echoed } });
    const err = (await failure(client().powerParameters())) as MaasApiError;
    expect(err).toBeInstanceOf(MaasApiError);
    expect(err.message).toMatch(/answered 500 .*power query failed/);
    expect(err.message).toContain('power_user');
    const shown = [describeError(err), inspect(err, { depth: 5 }), JSON.stringify(err)].join('\n');
    for (const secret of ['P@ss;w0rd', 'kg-canary-1', 'a b c d', 'ADMIN']) expect(shown).not.toContain(secret);
  });

  it('a text error body that is not one of MAAS\'s reasons is a fixed sentence, never an excerpt', async () => {
    sim.injectFaults({ status: 502, count: 3, body: `<html>proxy failed; power_pass=pass,word1 ${'x'.repeat(5000)}</html>` });
    const err = (await failure(client().listSubnets())) as MaasApiError;
    expect(err.body).toMatch(/^\(MAAS's answer is not shown: it is neither JSON nor one of MAAS's own reasons/);
    expect(err.message).not.toContain('pass,word1');
    expect(err.message).not.toContain('proxy failed');
  });

  it('an answer carrying power_pass reaches the caller without it', async () => {
    sim.state.machines[0]!.power_parameters = { ...sim.state.machines[0]!.power_parameters, power_pass: 'P@ss;w0rd' };
    const params = await client().powerParameters(['dep001']);
    expect(params.dep001?.power_address).toMatch(/^qemu\+ssh:/);
    expect(JSON.stringify(params)).not.toContain('P@ss;w0rd');
    expect(params.dep001).not.toHaveProperty('power_pass');
  });
});

describe('the response body cap', () => {
  const HUNDRED_MB = 100 * 1000 * 1000;

  /** A loopback server streaming 100 MB of JSON-ish bytes, counting what it managed to write. */
  async function hugeBodyServer(withLength: boolean) {
    const sent = { bytes: 0, requests: 0 };
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const server = createServer((_req, res) => {
      sent.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': String(HUNDRED_MB) } : {}) });
      const pump = () => {
        while (sent.bytes < HUNDRED_MB && !res.destroyed) {
          sent.bytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => undefined);
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/MAAS`;
    return { sent, url, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
  }

  it('a streamed 100 MB body is cut off at the 64 MiB default with a clear error, once', async () => {
    const big = await hugeBodyServer(false);
    try {
      const err = await failure(client(FAST, key, big.url).listSubnets());
      expect(err).toBeInstanceOf(ChatopsError);
      expect((err as ChatopsError).message).toBe('MAAS region-a answered GET subnets/ with a body larger than 64 MiB; it was not read');
      expect((err as ChatopsError).describe()).toMatch(/MAAS_MAX_BODY_MIB/);
      expect(big.sent.requests).toBe(1);
      expect(big.sent.bytes).toBeLessThan(HUNDRED_MB);
    } finally {
      await big.close();
    }
  });

  it('a declared 100 MB body is refused from its Content-Length before it is read, under a configured cap', async () => {
    const big = await hugeBodyServer(true);
    try {
      const err = await failure(client({ ...FAST, maxBodyBytes: 1024 * 1024 }, key, big.url).listSubnets());
      expect((err as ChatopsError).message).toMatch(/larger than 1 MiB; it was not read/);
      expect(big.sent.bytes).toBeLessThan(HUNDRED_MB / 2);
    } finally {
      await big.close();
    }
  });
});

describe('machine lists are read as streams: the cap is on what is kept', () => {
  /** A loopback MAAS rendering `count` pretty-printed machines of about 9 KB each, most of it fields no check reads. */
  async function machineListServer(count: number) {
    const sent = { bytes: 0, requests: 0 };
    const rendered = (n: number) =>
      JSON.stringify(
        {
          system_id: `m${n}`,
          hostname: `node-${n}`,
          power_type: 'virsh',
          status: 4,
          status_name: 'Ready',
          interface_set: [{ id: n, name: 'ens3', type: 'physical', mac_address: '52:54:00:00:00:01', links: [{ subnet: { cidr: '10.0.0.0/24' } }] }],
          blockdevice_set: [{ id: n, model: 'QEMU HARDDISK', serial: 'x'.repeat(8000) }],
        },
        null,
        4,
      );
    const server = createServer((_req, res) => {
      sent.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      let n = 0;
      const pump = () => {
        while (n < count && !res.destroyed) {
          const piece = (n === 0 ? '[' : ',') + rendered(n) + (n === count - 1 ? ']' : '');
          n += 1;
          sent.bytes += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/MAAS`;
    return { sent, url, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
  }

  it('a machine list far larger than the cap is read whole when what is kept fits', async () => {
    const maas = await machineListServer(700);
    const seen: MaasRequestInfo[] = [];
    try {
      const machines = await client({ ...FAST, maxBodyBytes: 1024 * 1024, onRequest: (info) => seen.push(info) }, key, maas.url).listMachines();
      expect(maas.sent.bytes).toBeGreaterThan(5 * 1024 * 1024);
      expect(machines).toHaveLength(700);
      expect(machines[699]).toEqual({ system_id: 'm699', hostname: 'node-699', power_type: 'virsh', status: 4, status_name: 'Ready', interface_set: [{ id: 699, name: 'ens3', type: 'physical', mac_address: '52:54:00:00:00:01' }] });
      expect(seen.map((s) => s.bytes)).toEqual([maas.sent.bytes]);
    } finally {
      await maas.close();
    }
  });

  it('a zone whose kept fields pass the cap is refused naming MAAS_MAX_BODY_MIB and how far it read, once, without reading the rest', async () => {
    const maas = await machineListServer(20_000);
    try {
      const err = await failure(client({ ...FAST, maxBodyBytes: 1024 * 1024 }, key, maas.url).listMachines());
      expect(err).toBeInstanceOf(ChatopsError);
      expect((err as ChatopsError).message).toMatch(/^MAAS region-a answered GET machines\/ with more than 1 MiB to keep, even of only the fields the checks read \(\d+ entries and [\d.]+ MiB of JSON read\); the rest was not read$/);
      expect((err as ChatopsError).describe()).toMatch(/MAAS_MAX_BODY_MIB caps what is kept/);
      expect(maas.sent.requests).toBe(1);
      expect(maas.sent.bytes).toBeLessThan((20_000 * 8_000) / 2);
    } finally {
      await maas.close();
    }
  });
});
