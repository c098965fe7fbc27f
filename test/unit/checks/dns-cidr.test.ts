import { describe, expect, it } from 'vitest';
import { invalidCidrs, ipInSubnets, parseIp } from '../../../src/features/dns/cidr.ts';

describe('ipInSubnets (Go ParseCIDR/Contains semantics)', () => {
  it.each([
    { ip: '10.11.135.36', subnets: null, in: true },
    { ip: '10.11.135.36', subnets: [], in: true },
    { ip: '10.11.135.36', subnets: ['10.11.135.0/24'], in: true },
    { ip: '10.11.136.36', subnets: ['10.11.135.0/24'], in: false },
    { ip: '10.11.135.36', subnets: ['10.11.135.5/24'], in: true }, // host bits are masked, as Go does
    { ip: '10.11.135.36', subnets: ['10.0.0.0/8', '192.168.0.0/16'], in: true },
    { ip: '10.11.135.36', subnets: ['0.0.0.0/0'], in: true },
    { ip: '10.11.135.36', subnets: ['10.11.135.36/32'], in: true },
    { ip: '10.11.135.37', subnets: ['10.11.135.36/32'], in: false },
    { ip: '10.11.135.36', subnets: ['garbage', '10.11.135.0/24'], in: true }, // bad entries are skipped
    { ip: '10.11.135.36', subnets: [''], in: false }, // an empty ConfigMap value filters everything
    { ip: '10.11.135.36', subnets: ['10.11.135.0/33'], in: false },
    { ip: '', subnets: ['10.11.135.0/24'], in: false },
    { ip: 'not-an-ip', subnets: ['10.11.135.0/24'], in: false },
    { ip: '2001:db8::10', subnets: ['2001:db8::/64'], in: true },
    { ip: '2001:db8:0:1::10', subnets: ['2001:db8::/64'], in: false },
    { ip: '2001:db8::10', subnets: ['10.11.135.0/24'], in: false },
    { ip: '10.11.135.36', subnets: ['2001:db8::/64'], in: false },
    { ip: '::ffff:10.11.135.36', subnets: ['10.11.135.0/24'], in: true }, // IPv4-mapped counts as IPv4
    { ip: 'fe80::1%eth0', subnets: ['fe80::/10'], in: false }, // Go ParseIP rejects zones
  ])('$ip in $subnets → $in', ({ ip, subnets, in: expected }) => {
    expect(ipInSubnets(ip, subnets)).toBe(expected);
  });

  it('parses IPv6 with an embedded IPv4 tail', () => {
    expect(Array.from(parseIp('::ffff:1.2.3.4') ?? [])).toEqual([1, 2, 3, 4]);
    expect(parseIp('64:ff9b::1.2.3.4')?.length).toBe(16);
    expect(Array.from(parseIp('2001:db8::1') ?? []).slice(0, 4)).toEqual([0x20, 0x01, 0x0d, 0xb8]);
  });

  it('lists entries that are not CIDRs', () => {
    expect(invalidCidrs(['10.0.0.0/8', '', ' 10.1.0.0/16', '10.2.0.0'])).toEqual(['', ' 10.1.0.0/16', '10.2.0.0']);
    expect(invalidCidrs(null)).toEqual([]);
  });
});
