import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { subnetDnsServers, withoutSecrets } from '../../../src/features/resolver/dhcpd-conf.ts';
import { dhcpdReadCommand, MAAS_DHCPD_CONFIG_PATHS } from '../../../src/features/resolver/rack-dhcpd.ts';
import { renderDhcpdConf, scenario, subnet, type SimDhcpRack } from '../../../lab/maas-sim/index.ts';

// The fixtures are MAAS's own dhcpd.conf.template rendered by tempita (test/fixtures/dhcpd/README.md).
const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'dhcpd', `${name}.conf`), 'utf8');

describe('DHCP option 6 from a dhcpd.conf MAAS rendered', () => {
  it.each([
    ['site-b-allow-dns', ['10.20.0.2', '10.0.0.5']],
    ['site-b-allow-dns-forwarder', ['10.20.0.2', '10.0.0.5', '10.20.0.53']],
    ['site-b-forwarder', ['10.20.0.53']],
  ])('%s: the subnet block of 10.20.0.0/24, in order', (name, servers) => {
    const found = subnetDnsServers(fixture(name), '10.20.0.0/24');
    expect(found).toMatchObject({ found: true, subnet: '10.20.0.0/24', servers, scope: 'subnet', otherScopes: [] });
    // The other shared-network's subnet is not mixed in.
    expect(subnetDnsServers(fixture(name), '10.30.0.0/24')).toMatchObject({ servers: ['10.30.0.2', '10.0.0.5'] });
  });

  it('a subnet the file does not serve is a problem naming the ones it does', () => {
    expect(subnetDnsServers(fixture('site-b-forwarder'), '10.99.0.0/24')).toEqual({
      found: false,
      problem: 'no subnet block for 10.99.0.0/24 (it has 10.20.0.0/24, 10.30.0.0/24)',
      subnets: ['10.20.0.0/24', '10.30.0.0/24'],
    });
  });

  it('a pool or host that sets option 6 too is listed; a subnet without it inherits the global one', () => {
    const text = [
      'option domain-name-servers 10.0.0.9;',
      'shared-network vlan-1 {',
      '  subnet 10.40.0.0 netmask 255.255.254.0 {',
      '    pool { option domain-name-servers 10.40.0.53; range 10.40.0.100 10.40.0.199; }',
      '  }',
      '}',
      'host n1-52-54-00-00-00-01 { option domain-name-servers 10.40.0.54; hardware ethernet 52:54:00:00:00:01; }',
    ].join('\n');
    expect(subnetDnsServers(text, '10.40.0.0/23')).toEqual({
      found: true,
      subnet: '10.40.0.0/23',
      servers: ['10.0.0.9'],
      line: 'option domain-name-servers 10.0.0.9;',
      scope: 'global',
      otherScopes: ['pool: 10.40.0.53', 'host n1-52-54-00-00-00-01: 10.40.0.54'],
    });
  });

  it('drops the OMAPI secret before anything reads the text', () => {
    const text = fixture('site-b-forwarder');
    expect(text).toMatch(/secret "[^"]+";/);
    expect(withoutSecrets(text)).not.toMatch(/secret/);
    expect(withoutSecrets(text)).toContain('omapi-key omapi_key;');
  });

  it('the simulator renders the same option 6 as MAAS for the same subnet states', () => {
    const rack: SimDhcpRack = { ip: '10.20.0.2', subnetIds: [20], configPath: '/nonexistent' };
    const state = (allow_dns: boolean, dns_servers: string[]) =>
      scenario({ subnets: [subnet({ id: 20, cidr: '10.20.0.0/24', gateway_ip: '10.20.0.1', allow_dns, dns_servers })], dhcp: { regionIp: '10.0.0.5', racks: [rack] } });
    for (const [name, allow, servers] of [
      ['site-b-allow-dns', true, []],
      ['site-b-allow-dns-forwarder', true, ['10.20.0.53']],
      ['site-b-forwarder', false, ['10.20.0.53']],
    ] as const) {
      const ours = subnetDnsServers(renderDhcpdConf(state(allow, [...servers]), rack), '10.20.0.0/24');
      const maas = subnetDnsServers(fixture(name), '10.20.0.0/24');
      expect(ours.found && ours.servers, name).toEqual(maas.found && maas.servers);
    }
  });

  it('reads the snap path, then the deb path, every path one quoted word; sudo -n only when the file is not readable', () => {
    expect(MAAS_DHCPD_CONFIG_PATHS).toEqual(['/var/snap/maas/common/maas/dhcpd.conf', '/var/lib/maas/dhcpd.conf']);
    expect(dhcpdReadCommand(MAAS_DHCPD_CONFIG_PATHS)).toBe(
      `for f in /var/snap/maas/common/maas/dhcpd.conf /var/lib/maas/dhcpd.conf; do if [ -e "$f" ]; then printf '%s%s\\n' '#maas-chatops-dhcpd-path ' "$f"; printf '%s%s %s\\n' '#maas-chatops-dhcpd-time ' "$(stat -c %Y -- "$f" 2>/dev/null)" "$(date +%s)"; ps -o etimes= -o args= -C dhcpd 2>/dev/null | sed 's/^/#maas-chatops-dhcpd-proc /'; if [ -r "$f" ]; then exec cat -- "$f"; fi; exec sudo -n cat -- "$f"; fi; done; exit 66`,
    );
    expect(dhcpdReadCommand(["/tmp/a b'; rm -rf /"])).toContain(`for f in '/tmp/a b'\\''; rm -rf /'; do`);
  });
});
