import { describe, expect, it } from 'vitest';
import { parseConfigText, type SiteConfig } from '../../../src/core/config.ts';
import { ChatopsError } from '../../../src/core/errors.ts';
import { rackTarget, vmHostTarget } from '../../../src/adapters/ssh/targets.ts';
import { resolveTarget } from '../../../src/core/targets.ts';

const FP_RACK = 'SHA256:QJeh7U525gG0+cB9IAzgcrEH9pk3sGI3xNrbdaTqi0c';
const FP_VM = 'SHA256:vPy9w1s8C1HcZ478r7wdVpY310j7lmQ2NQNjq/zDfD0';
const KEY2 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIARcYvamicvLAvusIkb1Eq3MAmx16LD+mMoMVtcnGpaF';

const files: Record<string, string> = {
  '/secrets/rack_ed25519': 'RACK-PRIVATE-KEY-TEXT',
  '/secrets/vmhost_ed25519': 'VMHOST-PRIVATE-KEY-TEXT',
  '/secrets/known_hosts': `172.16.1.29 ${KEY2}\n[172.16.1.30]:2200 ${KEY2}\n10.20.0.2 ${KEY2}\n`,
};

function site(yaml: string): SiteConfig {
  const text = `maas:\n  region-a: { url: http://127.0.0.1:5240/MAAS, apiKey: "a:b:c" }\nsites:\n  site-b:\n    maas: region-a\n${yaml}`;
  const { config } = parseConfigText(text, {
    path: 'test.yaml',
    env: {},
    readFile: (p) => {
      const content = files[p];
      if (content === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return content;
    },
  });
  return resolveTarget(config, 'site', 'site-b');
}

describe('rackTarget', () => {
  it('takes host, port, user, key and pin from rack.ssh', () => {
    const target = rackTarget(site(`    rack:\n      resolver: 10.20.0.2\n      ssh: { host: 10.20.0.5, port: 2222, user: ops, privateKey: file:/secrets/rack_ed25519, hostKey: "${FP_RACK}" }\n`));
    expect(target).toMatchObject({ host: '10.20.0.5', port: 2222, user: 'ops', hostKeys: [FP_RACK], configPath: 'sites.site-b.rack.ssh' });
    expect(target.privateKey.reveal()).toBe('RACK-PRIVATE-KEY-TEXT');
  });

  it('defaults the host to the resolver and the port to 22, and adds known_hosts pins', () => {
    const target = rackTarget(site(`    knownHosts: file:/secrets/known_hosts\n    rack:\n      resolver: 10.20.0.2:5353\n      ssh: { user: ops, privateKey: file:/secrets/rack_ed25519, hostKey: "${FP_RACK}" }\n`));
    expect(target).toMatchObject({ host: '10.20.0.2', port: 22, hostKeys: [FP_RACK, FP_VM] });
  });

  it('returns no pin when none is configured: the connector refuses and prints the offered key', () => {
    const target = rackTarget(site(`    rack:\n      resolver: 10.20.0.2\n      ssh: { user: ops, privateKey: file:/secrets/rack_ed25519 }\n`));
    expect(target.hostKeys).toEqual([]);
  });

  it.each([
    ['no rack.ssh', `    rack:\n      resolver: 10.20.0.2\n      probe: direct\n`, /sites\.site-b\.rack\.ssh: not configured/],
    ['no user', `    rack:\n      resolver: 10.20.0.2\n      ssh: { privateKey: file:/secrets/rack_ed25519 }\n`, /rack\.ssh\.user: no SSH user/],
    ['no key', `    rack:\n      resolver: 10.20.0.2\n      ssh: { user: ops }\n`, /rack\.ssh\.privateKey: no SSH private key/],
  ])('names the key to fix when there is %s', (_name, yaml, message) => {
    const build = () => rackTarget(site(yaml));
    expect(build).toThrow(ChatopsError);
    expect(build).toThrow(message);
  });
});

describe('vmHostTarget', () => {
  const vmHosts = `    knownHosts: file:/secrets/known_hosts\n    vmHosts:\n      default: { port: 22, user: ops, privateKey: file:/secrets/vmhost_ed25519 }\n      172.16.1.28: { hostKey: "${FP_RACK}" }\n      172.16.1.30: { port: 2200, user: virt }\n`;

  it('takes unset fields of a host entry from default', () => {
    const target = vmHostTarget(site(vmHosts), '172.16.1.28', 'ubuntu');
    expect(target).toMatchObject({ host: '172.16.1.28', port: 22, user: 'ops', hostKeys: [FP_RACK], configPath: 'sites.site-b.vmHosts.172.16.1.28' });
    expect(target.privateKey.reveal()).toBe('VMHOST-PRIVATE-KEY-TEXT');
  });

  it("prefers the entry's own fields and pins [host]:port from known_hosts", () => {
    const target = vmHostTarget(site(vmHosts), '172.16.1.30', 'ubuntu');
    expect(target).toMatchObject({ port: 2200, user: 'virt', hostKeys: [FP_VM] });
  });

  it('serves a host without an entry from default, pinned by known_hosts', () => {
    const target = vmHostTarget(site(vmHosts), '172.16.1.29');
    expect(target).toMatchObject({ host: '172.16.1.29', user: 'ops', hostKeys: [FP_VM], configPath: 'sites.site-b.vmHosts.172.16.1.29' });
  });

  it("uses the power_address user when neither the entry nor default sets one", () => {
    const yaml = `    vmHosts:\n      default: { privateKey: file:/secrets/vmhost_ed25519 }\n      172.16.1.28: { hostKey: "${FP_RACK}" }\n`;
    expect(vmHostTarget(site(yaml), '172.16.1.28', 'ubuntu').user).toBe('ubuntu');
    expect(() => vmHostTarget(site(yaml), '172.16.1.28')).toThrow(/vmHosts\.172\.16\.1\.28\.user: no SSH user/);
  });

  it('leaves an unpinned host without pins', () => {
    expect(vmHostTarget(site(vmHosts), '172.16.1.99').hostKeys).toEqual([]);
  });
});
