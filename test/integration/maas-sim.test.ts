import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OAuth from 'oauth-1.0a';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maasOAuthHeader } from '../../src/adapters/maas/oauth-header.ts';
import {
  dnsResource,
  machine,
  randomApiKey,
  scenario,
  startMaasSimulator,
  subnet,
  type MaasSimulator,
  type MaasSimulatorOptions,
} from '../../lab/maas-sim/index.ts';

let sim: MaasSimulator;
let key: string;

function base() {
  return scenario({
    machines: [
      machine({ system_id: 'aaa001', hostname: 'one', status: 'Ready', tags: ['k8s'], macs: ['52:54:00:00:00:01'] }),
      machine({ system_id: 'bbb002', hostname: 'two', status: 'Deployed', macs: ['52:54:00:00:00:02'] }),
    ],
    dnsresources: [dnsResource({ id: 5, fqdn: 'api.maas.example', ips: ['10.0.0.1', '10.0.0.2'] })],
    subnets: [subnet({ id: 9, cidr: '10.20.0.0/24', dns_servers: ['10.20.0.2'], allow_dns: false, allow_proxy: false, managed: false })],
  });
}

async function start(options: Partial<MaasSimulatorOptions> = {}): Promise<void> {
  key = randomApiKey();
  sim = await startMaasSimulator({ scenario: base(), apiKeys: [key], ...options });
}

interface RawOptions {
  form?: string;
  auth?: 'plaintext' | 'hmac' | 'none';
}

/** A request signed the way a MAAS client signs it, outside our client, to probe the simulator's rules. */
async function raw(method: string, pathAndQuery: string, options: RawOptions = {}): Promise<{ status: number; text: string }> {
  const url = `${sim.url}/api/2.0/${pathAndQuery}`;
  const headers: Record<string, string> = {};
  if (options.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const auth = options.auth ?? 'plaintext';
  if (auth === 'plaintext') headers.authorization = maasOAuthHeader(key, { method, url });
  if (auth === 'hmac') {
    const [ck, tk, ts] = key.split(':') as [string, string, string];
    const oauth = new OAuth({
      consumer: { key: ck, secret: '' },
      signature_method: 'HMAC-SHA1',
      hash_function: (text, signingKey) => createHmac('sha1', signingKey).update(text).digest('base64'),
    });
    const data = Object.fromEntries(new URLSearchParams(options.form ?? ''));
    headers.authorization = oauth.toHeader(oauth.authorize({ url, method, data }, { key: tk, secret: ts })).Authorization;
  }
  const res = await request(url, { method: method as 'GET', headers, body: options.form });
  return { status: res.statusCode, text: await res.body.text() };
}

afterEach(async () => {
  await sim.close();
});

describe('the simulator itself', () => {
  beforeEach(() => start());

  it('serves under /MAAS on loopback and refuses any other address', async () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/MAAS$/);
    await expect(startMaasSimulator({ scenario: base(), apiKeys: [key], host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  it('answers 401 without an Authorization header, and machines/ the anonymous handler\'s 400 (rows whoami, machines-anon)', async () => {
    expect(await raw('GET', 'users/?op=whoami', { auth: 'none' })).toEqual({ status: 401, text: 'Forbidden' });
    expect(await raw('GET', 'machines/', { auth: 'none' })).toEqual({ status: 400, text: 'Unrecognised signature: method=GET op=None' });
  });

  it('accepts HMAC-SHA1 as MAAS does, form fields signed', async () => {
    expect((await raw('GET', 'machines/?hostname=one', { auth: 'hmac' })).status).toBe(200);
    const put = await raw('PUT', 'dnsresources/5/', { auth: 'hmac', form: 'ip_addresses=10.0.0.9' });
    expect(put.status).toBe(200);
    expect(sim.state.dnsresources[0]?.ip_addresses).toEqual(['10.0.0.9']);
  });

  it('records method, path, op, query, form and status; resetCalls empties the record', async () => {
    await raw('POST', 'machines/aaa001/?op=mark_broken', { form: 'comment=a&comment=b' });
    expect(sim.calls).toEqual([
      { method: 'POST', path: '/MAAS/api/2.0/machines/aaa001/', op: 'mark_broken', query: { op: ['mark_broken'] }, form: { comment: ['a', 'b'] }, status: 403, nonce: expect.any(String) },
    ]);
    sim.resetCalls();
    expect(sim.calls).toEqual([]);
  });

  it('reads op from the form too, answers an unknown op 400 and an unknown path 404', async () => {
    sim.state.machines[0]!.owner = 'admin';
    expect((await raw('POST', 'machines/aaa001/', { form: 'op=mark_broken' })).status).toBe(200);
    expect(sim.state.machines[0]?.status).toBe(8);
    expect(await raw('GET', 'machines/?op=frobnicate')).toEqual({ status: 400, text: 'Unrecognised signature: method=GET op=frobnicate' });
    expect((await raw('GET', 'nothing-here/')).status).toBe(404);
  });

  it('faults hit only matching paths, and only as many times as asked', async () => {
    sim.injectFaults({ status: 502, count: 1, path: /op=power_parameters/ });
    expect((await raw('GET', 'machines/')).status).toBe(200);
    expect((await raw('GET', 'machines/?op=power_parameters')).status).toBe(502);
    expect((await raw('GET', 'machines/?op=power_parameters')).status).toBe(200);
  });

  it('serves what a test changes in state between two calls', async () => {
    sim.state.machines[1]!.hostname = 'renamed';
    sim.state.machines.push(machine({ system_id: 'ccc003', hostname: 'three', id: 99 }));
    const list = JSON.parse((await raw('GET', 'machines/')).text) as { hostname: string }[];
    expect(list.map((m) => m.hostname)).toEqual(['one', 'renamed', 'three']);
  });

  it('an unknown tag is MAAS\'s 400', async () => {
    expect(await raw('GET', 'machines/?tags=nope')).toEqual({ status: 400, text: '{"tags": ["No such tag(s): \'nope\'."]}' });
  });
});

describe('dnsresources PUT (forms/dnsresource.py)', () => {
  beforeEach(() => start());

  it.each([
    ['one space-separated value', 'ip_addresses=10.0.0.7+10.0.0.8', ['10.0.0.7', '10.0.0.8']],
    ['a repeated field keeps only the last', 'ip_addresses=10.0.0.7&ip_addresses=10.0.0.8', ['10.0.0.8']],
    ['an empty value clears every address (the PCP-6608 wipe)', 'ip_addresses=', []],
    ['an omitted field changes nothing', 'address_ttl=60', ['10.0.0.1', '10.0.0.2']],
  ])('%s', async (_what, form, expected) => {
    const res = await raw('PUT', 'dnsresources/5/', { form });
    expect(res.status).toBe(200);
    expect(sim.state.dnsresources[0]?.ip_addresses).toEqual(expected);
    expect((JSON.parse(res.text) as { ip_addresses: { ip: string }[] }).ip_addresses.map((a) => a.ip)).toEqual(expected);
  });
});

describe('subnets PUT (forms/subnet.py, APIEditMixin in forms/__init__.py)', () => {
  it.each([
    ['allow_dns omitted: kept (off stays off)', 'allow_proxy=1', { allow_dns: false, allow_proxy: true, managed: false }],
    ['allow_proxy omitted: kept', 'allow_dns=1', { allow_dns: true, allow_proxy: false, managed: false }],
    ['managed omitted: kept', 'allow_dns=0&allow_proxy=0', { managed: false }],
    ['every flag omitted: only dns_servers changes', 'dns_servers=10.20.0.53', { dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy: false, managed: false }],
    ['dns_servers omitted: kept', 'allow_dns=1', { dns_servers: ['10.20.0.2'] }],
    ['both sent as true/false', 'allow_dns=true&allow_proxy=false', { allow_dns: true, allow_proxy: false }],
    ['3.5+: allow_dns/allow_proxy read true, t, 1 as true and anything else as false; managed is Django\'s (0 is true)', 'allow_dns=True&allow_proxy=yes&managed=0', { allow_dns: true, allow_proxy: false, managed: true }],
  ])('%s', async (_what, form, expected) => {
    await start();
    expect((await raw('PUT', 'subnets/9/', { form })).status).toBe(200);
    expect(sim.state.subnets[0]).toMatchObject(expected);
  });

  it.each([
    ['allow_dns=0&allow_proxy=0&managed=0', { allow_dns: true, allow_proxy: true, managed: true }],
    ['allow_dns=off&allow_proxy=FALSE&managed=', { allow_dns: true, allow_proxy: false, managed: false }],
    ['allow_dns=False&allow_proxy=false&managed=false', { allow_dns: false, allow_proxy: false, managed: false }],
  ])('3.4: every flag is Django\'s BooleanField: only "false" and "" are false (rows bool-0, bool-off, managed-0): %s', async (form, expected) => {
    await start({ scenario: scenario({ ...base(), version: '3.4.10' }) });
    expect((await raw('PUT', 'subnets/9/', { form })).status).toBe(200);
    expect(sim.state.subnets[0]).toMatchObject(expected);
  });

  it('the stricter "not-maas-reset-to-true" peer resets an omitted flag to true (not what MAAS does)', async () => {
    await start({ rules: { subnetOmittedFlags: 'not-maas-reset-to-true' } });
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=10.20.0.53' });
    expect(sim.state.subnets[0]).toMatchObject({ dns_servers: ['10.20.0.53'], allow_dns: true, allow_proxy: true, managed: true });
  });

  it('dns_servers: every value, split on commas and spaces; empty clears; a bad address is a 400', async () => {
    await start();
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=10.0.0.53,10.0.0.54&dns_servers=10.0.0.55&allow_dns=0&allow_proxy=0' });
    expect(sim.state.subnets[0]?.dns_servers).toEqual(['10.0.0.53', '10.0.0.54', '10.0.0.55']);
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=&allow_dns=0&allow_proxy=0' });
    expect(sim.state.subnets[0]?.dns_servers).toEqual([]);
    const bad = await raw('PUT', 'subnets/9/', { form: 'dns_servers=resolver.example&allow_dns=0&allow_proxy=0' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Invalid IP address: resolver.example');
  });
});

describe('DHCP: when MAAS rewrites the rack dhcpd.conf (models/signals/subnet.py, triggers/system.py in 3.6, models/iprange.py)', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function startDhcp(release: '3.6' | '3.7', options: { userIsAdmin?: boolean; owner?: string } = {}): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), 'maas-sim-dhcp-'));
    const configPath = join(dir, 'dhcpd.conf');
    key = randomApiKey();
    const world = scenario({
      version: release === '3.6' ? '3.6.5' : '3.7.3',
      ...(options.userIsAdmin === false ? { userIsAdmin: false } : {}),
      subnets: [subnet({ id: 9, cidr: '10.20.0.0/24', gateway_ip: '10.20.0.1', dns_servers: [], allow_dns: true })],
      ipranges: [{ id: 3, type: 'dynamic', subnet: 9, start_ip: '10.20.0.100', end_ip: '10.20.0.199', comment: 'nodes', user: options.owner ?? 'admin' }],
      dhcp: { regionIp: '10.0.0.5', racks: [{ ip: '10.20.0.2', subnetIds: [9], configPath }] },
    });
    sim = await startMaasSimulator({ scenario: world, apiKeys: [key] });
    return configPath;
  }
  const option6 = (path: string) => /option domain-name-servers ([^;]+);/.exec(readFileSync(path, 'utf8'))?.[1];

  it('the racks write dhcpd.conf as MAAS renders it: with allow_dns on, the rack first and the region last, then dns_servers', async () => {
    const path = await startDhcp('3.7');
    expect(option6(path)).toBe('10.20.0.2, 10.0.0.5');
  });

  it('3.6: a dns_servers / allow_dns change has the racks rewrite dhcpd.conf (the sys_dhcp_subnet_update trigger)', async () => {
    const path = await startDhcp('3.6');
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=10.20.0.53&allow_dns=0' });
    expect(option6(path)).toBe('10.20.0.53');
  });

  it('3.7: a dns_servers / allow_dns change leaves dhcpd.conf as it was (signals watch vlan_id only)', async () => {
    const path = await startDhcp('3.7');
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=10.20.0.53&allow_dns=0' });
    expect(option6(path)).toBe('10.20.0.2, 10.0.0.5');
  });

  it('ipranges PUT: a save that changes nothing starts configure-dhcp, and the racks rewrite dhcpd.conf', async () => {
    const path = await startDhcp('3.7');
    await raw('PUT', 'subnets/9/', { form: 'dns_servers=10.20.0.53&allow_dns=0' });
    const put = await raw('PUT', 'ipranges/3/', { form: 'comment=nodes' });
    expect(put.status).toBe(200);
    expect(JSON.parse(put.text)).toMatchObject({ id: 3, type: 'dynamic', comment: 'nodes', subnet: { id: 9, cidr: '10.20.0.0/24' } });
    expect(option6(path)).toBe('10.20.0.53');
    expect(sim.state.ipranges?.[0]).toMatchObject({ start_ip: '10.20.0.100', end_ip: '10.20.0.199', comment: 'nodes' });
  });

  it('ipranges PUT: a user who is neither admin nor the owner gets 403 and nothing is rewritten', async () => {
    const path = await startDhcp('3.7', { userIsAdmin: false, owner: 'someone-else' });
    const before = readFileSync(path, 'utf8');
    expect(await raw('PUT', 'ipranges/3/', { form: 'comment=nodes' })).toEqual({ status: 403, text: "Unable to modify IP range. You don't own the IP range." });
    expect(readFileSync(path, 'utf8')).toBe(before);
  });
});
