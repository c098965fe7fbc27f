import { describe, expect, it } from 'vitest';
import { dnsIpValue, machineFilterQuery, subnetDnsForm } from '../../../src/adapters/maas/client.ts';
import { ChatopsError } from '../../../src/core/errors.ts';
import { MaasApiError, scrubApiKey } from '../../../src/adapters/maas/maas-api-error.ts';

describe('dnsIpValue', () => {
  it.each([
    [['10.0.0.1'], '10.0.0.1'],
    [['10.0.0.1', '10.0.0.2'], '10.0.0.1 10.0.0.2'],
    [[' 10.0.0.1 ', '10.0.0.1', 'fd00::1'], '10.0.0.1 fd00::1'],
  ])('%j → one space-separated value %j', (ips, value) => {
    expect(dnsIpValue(7, ips)).toBe(value);
  });

  it.each([[[]], [['']], [['  ', '']]])('refuses the empty set %j with GUARD_REFUSED', (ips) => {
    expect(() => dnsIpValue(7, ips)).toThrow(expect.objectContaining({ code: 'GUARD_REFUSED' }));
  });

  it('refuses values that are not IP addresses (a space inside one would split it in two)', () => {
    expect(() => dnsIpValue(7, ['10.0.0.1 10.0.0.2'])).toThrow(ChatopsError);
    expect(() => dnsIpValue(7, ['prod-k8s.maas'])).toThrow(/not IP addresses: prod-k8s.maas/);
  });
});

describe('subnetDnsForm', () => {
  it('always sends dns_servers, allow_dns and allow_proxy, the flags as true/false (MAAS 3.4 reads 0 as true)', () => {
    expect(subnetDnsForm({ dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy: true, managed: false })).toEqual([
      ['dns_servers', '10.20.0.53'],
      ['allow_dns', 'false'],
      ['allow_proxy', 'true'],
      ['managed', 'false'],
    ]);
    expect(subnetDnsForm({ dns_servers: [], allow_dns: true, allow_proxy: false })).toEqual([
      ['dns_servers', ''],
      ['allow_dns', 'true'],
      ['allow_proxy', 'false'],
    ]);
  });
});

describe('machineFilterQuery', () => {
  it('sends zone and pool once and repeats tags, hostname, id and mac_address', () => {
    expect(
      machineFilterQuery({ zone: 'site-b', pool: 'p', tags: ['a', 'b'], hostname: ['h1'], id: ['x', 'y'], mac_address: ['52:54:00:00:00:01'] }),
    ).toEqual([
      ['zone', 'site-b'],
      ['pool', 'p'],
      ['tags', 'a'],
      ['tags', 'b'],
      ['hostname', 'h1'],
      ['id', 'x'],
      ['id', 'y'],
      ['mac_address', '52:54:00:00:00:01'],
    ]);
    expect(machineFilterQuery({})).toEqual([]);
  });
});

describe('MaasApiError', () => {
  it('is a ChatopsError MAAS_HTTP with status, MAAS message, method and path, and a hint', () => {
    const err = new MaasApiError({ region: 'region-a', status: 409, body: "Can't mark a non-broken node as 'Ready'.", method: 'POST', path: 'machines/abc/?op=mark_fixed' });
    expect(err).toBeInstanceOf(ChatopsError);
    expect(err).toMatchObject({ code: 'MAAS_HTTP', status: 409, method: 'POST', path: 'machines/abc/?op=mark_fixed' });
    expect(err.message).toBe("MAAS region-a answered 409 to POST machines/abc/?op=mark_fixed: Can't mark a non-broken node as 'Ready'.");
    expect(err.describe()).toMatch(/current state/);
  });

  it('keeps a long body short', () => {
    const err = new MaasApiError({ region: 'r', status: 500, body: 'x'.repeat(5000), method: 'GET', path: 'machines/' });
    expect(err.body.length).toBeLessThan(510);
  });
});

describe('scrubApiKey', () => {
  it('removes the whole key and each of its parts', () => {
    const key = 'consumerAAAAAAAAAA:tokenBBBBBBBBBBBBB:secretCCCCCCCCCCCCCCCCCCCCCCCCCC';
    const text = `Invalid access token: tokenBBBBBBBBBBBBB; expected &secretCCCCCCCCCCCCCCCCCCCCCCCCCC for ${key}`;
    const out = scrubApiKey(text, key);
    for (const part of key.split(':')) expect(out).not.toContain(part);
    expect(out).toContain('Invalid access token: [redacted]');
  });
});
