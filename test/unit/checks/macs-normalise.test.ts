import { describe, expect, it } from 'vitest';
import { normaliseMac, sameMac } from '../../../src/core/mac.ts';
import { parseVirshAddress, vmHostKey } from '../../../src/adapters/ssh/virsh-uri.ts';

describe('normaliseMac', () => {
  it.each([
    ['52:54:00:3a:91:0c', '52:54:00:3a:91:0c'],
    ['52:54:00:3A:91:0C', '52:54:00:3a:91:0c'],
    ['52-54-00-3A-91-0C', '52:54:00:3a:91:0c'],
    ['5254.003a.910c', '52:54:00:3a:91:0c'],
    ['5254003A910C', '52:54:00:3a:91:0c'],
    ['  52:54:00:3a:91:0c\n', '52:54:00:3a:91:0c'],
  ])('%j → %s', (input, expected) => {
    expect(normaliseMac(input)).toBe(expected);
  });

  it.each(['', '-', '52:54:00:3a:91', '52:54:00:3a:91:0c:00', '52:54-00:3a:91:0c', 'zz:54:00:3a:91:0c', '52:54:00:3a:91:0g', "52:54:00:3a:91:0c'; rm -rf /"])(
    'rejects %j',
    (input) => {
      expect(normaliseMac(input)).toBeNull();
    },
  );

  it('compares across formats; an invalid MAC equals nothing', () => {
    expect(sameMac('52-54-00-3A-91-0C', '52:54:00:3a:91:0c')).toBe(true);
    expect(sameMac('', '')).toBe(false);
  });
});

describe('parseVirshAddress', () => {
  it.each([
    ['qemu+ssh://ubuntu@172.16.1.28/system', { host: '172.16.1.28', user: 'ubuntu', localUri: 'qemu:///system' }, '172.16.1.28'],
    ['qemu+ssh://172.16.1.28/system', { host: '172.16.1.28', localUri: 'qemu:///system' }, '172.16.1.28'],
    ['qemu+ssh://ops@VMHOST1.Example.com:2222/system', { host: 'vmhost1.example.com', port: 2222, user: 'ops', localUri: 'qemu:///system' }, 'vmhost1.example.com:2222'],
    ['qemu+ssh://ops@[fd00::1]:2222/system?keyfile=/x&no_verify=1', { host: 'fd00::1', port: 2222, user: 'ops', localUri: 'qemu:///system' }, '[fd00::1]:2222'],
    ['qemu+ssh://[FD00::2]/session', { host: 'fd00::2', localUri: 'qemu:///session' }, 'fd00::2'],
    ['qemu+libssh2://root@10.0.0.1/system', { host: '10.0.0.1', user: 'root', localUri: 'qemu:///system' }, '10.0.0.1'],
    [' qemu+ssh://ubuntu@172.16.1.28 ', { host: '172.16.1.28', user: 'ubuntu', localUri: 'qemu:///system' }, '172.16.1.28'],
  ])('%s', (input, expected, key) => {
    const parsed = parseVirshAddress(input);
    expect(parsed).toEqual({ ok: true, address: expected });
    if (parsed.ok) expect(vmHostKey(parsed.address)).toBe(key);
  });

  it.each([
    ['172.16.1.28', /not a libvirt URI/],
    ['qemu:///system', /names no remote VM host/],
    ['qemu+ssh://u@-oProxyCommand=x/system', /invalid host/],
    ['qemu+ssh://u@host_name;rm/system', /./],
    ["qemu+ssh://it's%20me@host/system", /invalid user/],
  ])('refuses %s', (input, reason) => {
    const parsed = parseVirshAddress(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});
