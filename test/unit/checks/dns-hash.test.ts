import { describe, expect, it } from 'vitest';
import { compareStrings, dnsHash, EMPTY_SET_HASH } from '../../../src/features/dns/dns-hash.ts';

// Expected values computed outside this code: printf '<ip>\0…' | sha256sum
describe('dnsHash (the controller StableHashStringSlice)', () => {
  it.each([
    { ips: [], hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    { ips: ['10.11.135.36'], hash: 'fae8e006130015179550269f3859ba730a47650b470392bc0bd9298a409a61ab' },
    { ips: ['10.11.135.9', '10.11.135.10'], hash: 'f6c10fadf6e84d75a72b701f76b070b6d9e752acc99334e72bf9352a84273200' },
    { ips: ['10.11.135.38', '10.11.135.36', '10.11.135.37'], hash: 'fe1e548a7a798b6767944946128797c59ac62a7ed0cd9ceb1ec66a978eabc1d4' },
    { ips: ['2001:db8::10', '10.11.135.36'], hash: 'a4f8e6989c514e96f45b7946599e12bc95f2b11441ca5070e3fa4bdef661151b' },
    { ips: ['10.11.135.36', '10.11.135.36'], hash: '49d7a06b44f1b589723d2f0b9d4b055a9b77acb596e5f1b0e3f1c29d23892948' },
  ])('$ips → $hash', ({ ips, hash }) => {
    expect(dnsHash(ips)).toBe(hash);
  });

  it('drops empty strings, so an all-empty list hashes like no IPs', () => {
    expect(dnsHash(['', ''])).toBe(EMPTY_SET_HASH);
    expect(dnsHash(['', '10.11.135.36'])).toBe(dnsHash(['10.11.135.36']));
  });

  it('is order-insensitive and sorts as strings, not as numbers', () => {
    expect(dnsHash(['10.11.135.10', '10.11.135.9'])).toBe(dnsHash(['10.11.135.9', '10.11.135.10']));
    // numeric order (…9 then …10) would give 60e77b6c…, which is not what the controller stores
    expect(dnsHash(['10.11.135.9', '10.11.135.10'])).not.toBe('60e77b6c0252571f417b36601de54b8f9a99028e73ef19f0ee71d75d47ab2817');
  });

  it('does not dedup by itself (the fixed controller dedups first)', () => {
    expect(dnsHash(['10.11.135.36', '10.11.135.36'])).not.toBe(dnsHash(['10.11.135.36']));
  });

  it('compares bytes like Go sort.Strings', () => {
    expect(['b', 'B', 'a', '10', '9'].sort(compareStrings)).toEqual(['10', '9', 'B', 'a', 'b']);
  });
});
