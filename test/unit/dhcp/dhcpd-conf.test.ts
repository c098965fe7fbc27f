import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANY_NODE, DEFAULT_PARSE_LIMITS, dhcpdReadCommand, includeReadCommand, MAAS_DHCPD_CONFIG_PATHS, parseDhcpdConf, subnetOption6, type DhcpdConf, type IncludeFile } from '../../../src/features/dhcpd-conf/index.ts';
import { renderDhcpdConf, scenario, subnet, type SimDhcpRack } from '../../../lab/maas-sim/index.ts';

// MAAS's own dhcpd.conf.template rendered by tempita (test/fixtures/dhcpd/README.md).
const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'dhcpd', `${name}.conf`), 'utf8');

function conf(text: string, includes: Record<string, IncludeFile> = {}): DhcpdConf {
  const parsed = parseDhcpdConf({ path: 'dhcpd.conf', text }, new Map(Object.entries(includes)));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.conf;
}

function option6(text: string, cidr = '10.20.0.0/24', includes: Record<string, IncludeFile> = {}) {
  const found = subnetOption6(conf(text, includes), cidr);
  if (!found.found) throw new Error(found.problem);
  return found;
}

const SUBNET = (body: string) => `subnet 10.20.0.0 netmask 255.255.255.0 {\n  range 10.20.0.100 10.20.0.199;\n  ${body}\n}\n`;

describe('DHCP option 6 from a dhcpd.conf MAAS rendered', () => {
  it.each([
    ['site-b-allow-dns', ['10.20.0.2', '10.0.0.5']],
    ['site-b-allow-dns-forwarder', ['10.20.0.2', '10.0.0.5', '10.20.0.53']],
    ['site-b-forwarder', ['10.20.0.53']],
  ])('%s: the subnet block of 10.20.0.0/24, in order, and the other shared-network apart', (name, servers) => {
    expect(option6(fixture(name))).toMatchObject({ subnet: '10.20.0.0/24', dynamic: { servers }, variants: [], notes: [] });
    expect(option6(fixture(name)).dynamic?.setBy.at(-1)?.scope).toBe('subnet 10.20.0.0/24');
    expect(option6(fixture(name), '10.30.0.0/24').dynamic?.servers).toEqual(['10.30.0.2', '10.0.0.5']);
  });

  it('a subnet the file does not serve is a problem naming the ones it does', () => {
    expect(subnetOption6(conf(fixture('site-b-forwarder')), '10.99.0.0/24')).toEqual({
      found: false,
      problem: 'no subnet block for 10.99.0.0/24 (it has 10.20.0.0/24, 10.30.0.0/24)',
      subnets: ['10.20.0.0/24', '10.30.0.0/24'],
    });
  });

  it('the simulator renders the same option 6 as MAAS for the same subnet states', () => {
    const rack: SimDhcpRack = { ip: '10.20.0.2', subnetIds: [20], configPath: '/nonexistent' };
    const state = (allow_dns: boolean, dns_servers: string[]) =>
      scenario({
        subnets: [subnet({ id: 20, cidr: '10.20.0.0/24', gateway_ip: '10.20.0.1', allow_dns, dns_servers })],
        ipranges: [{ id: 1, type: 'dynamic', subnet: 20, start_ip: '10.20.0.100', end_ip: '10.20.0.199', comment: '', user: 'admin' }],
        dhcp: { regionIp: '10.0.0.5', racks: [rack] },
      });
    for (const [name, allow, servers] of [
      ['site-b-allow-dns', true, []],
      ['site-b-allow-dns-forwarder', true, ['10.20.0.53']],
      ['site-b-forwarder', false, ['10.20.0.53']],
    ] as const) {
      expect(option6(renderDhcpdConf(state(allow, [...servers]), rack)).dynamic?.servers, name).toEqual(option6(fixture(name)).dynamic?.servers);
    }
  });

  it('reads the snap path, then the deb path, every path one quoted word; sudo -n only when the file is not readable', () => {
    expect(MAAS_DHCPD_CONFIG_PATHS).toEqual(['/var/snap/maas/common/maas/dhcpd.conf', '/var/lib/maas/dhcpd.conf']);
    expect(dhcpdReadCommand(MAAS_DHCPD_CONFIG_PATHS)).toBe(
      `for f in /var/snap/maas/common/maas/dhcpd.conf /var/lib/maas/dhcpd.conf; do if [ -e "$f" ]; then printf '%s%s\\n' '#maas-chatops-dhcpd-path ' "$f"; printf '%s%s %s\\n' '#maas-chatops-dhcpd-time ' "$(stat -c %Y -- "$f" 2>/dev/null)" "$(date +%s)"; ps -o etimes= -o args= -C dhcpd 2>/dev/null | sed 's/^/#maas-chatops-dhcpd-proc /'; if [ -r "$f" ]; then exec cat -- "$f"; fi; exec sudo -n cat -- "$f"; fi; done; exit 66`,
    );
    expect(dhcpdReadCommand(["/tmp/a b'; rm -rf /"])).toContain(`for f in '/tmp/a b'\\''; rm -rf /'; do`);
    expect(includeReadCommand("/etc/x'; reboot")).toBe(`f='/etc/x'\\''; reboot'; if [ -r "$f" ]; then exec cat -- "$f"; fi; if [ -e "$f" ]; then exec sudo -n cat -- "$f"; fi; exit 66`);
  });
});

describe("dhcpd's tokens (common/conflex.c)", () => {
  it('a backslash escapes the next character in a string, so `\\"` does not end it; `\\\\` is a backslash and then the quote does', () => {
    expect(option6(SUBNET('option domain-name "x\\"; option domain-name-servers 10.99.0.53; \\""; option domain-name-servers 10.20.0.53;')).dynamic?.servers).toEqual(['10.20.0.53']);
    expect(option6(SUBNET('option domain-name "a\\\\"; option domain-name-servers 10.99.0.53; #";')).dynamic?.servers).toEqual(['10.99.0.53']);
  });

  it('`#` starts a comment outside strings only; keywords and option names are case-insensitive', () => {
    expect(option6(SUBNET('option domain-name "#x"; OPTION Domain-Name-Servers 10.20.0.53; # option domain-name-servers 10.99.0.53;')).dynamic?.servers).toEqual(['10.20.0.53']);
    expect(option6('SUBNET 10.20.0.0 NETMASK 255.255.255.0 { RANGE 10.20.0.100 10.20.0.199; Supersede DHCP.Domain-Name-Servers 10.20.0.54; }').dynamic?.servers).toEqual(['10.20.0.54']);
  });

  it('refuses what dhcpd refuses: a string that never ends, a 1,500-character string, 1,500 blanks in a row', () => {
    expect(conf(`${SUBNET('')}option domain-name "never ends;`).refusals.map((p) => p.reason)).toContainEqual(expect.stringMatching(/eof in string constant/));
    expect(conf(`${SUBNET('')}option domain-name "${'x'.repeat(1500)}";`).refusals[0]?.reason).toMatch(/string constant larger than internal buffer/);
    expect(conf(`${SUBNET('')}${' '.repeat(1500)}`).refusals[0]?.reason).toMatch(/whitespace too long/);
    expect(conf(`${SUBNET('')}option domain-name "${'x'.repeat(1499)}";${' '.repeat(1499)}`).refusals).toEqual([]);
  });
});

describe('every statement form that sets option 6, run in scope order (common/options.c set_option)', () => {
  it('`default` only when nothing outer set it; `prepend` and `append` add to the outer value; `send` replaces', () => {
    expect(option6(`option domain-name-servers 10.1.1.1;\n${SUBNET('default domain-name-servers 10.99.0.53;')}`).dynamic?.servers).toEqual(['10.1.1.1']);
    expect(option6(`option domain-name-servers 10.1.1.1;\n${SUBNET('prepend domain-name-servers 10.9.9.9; append domain-name-servers 10.8.8.8;')}`).dynamic?.servers).toEqual(['10.9.9.9', '10.1.1.1', '10.8.8.8']);
    expect(option6(`option domain-name-servers 10.1.1.1;\n${SUBNET('send domain-name-servers 10.7.7.7;')}`).dynamic?.servers).toEqual(['10.7.7.7']);
  });

  it('an expression is reported as one, not read as servers; a new name for code 6 is option 6', () => {
    expect(option6(SUBNET('option domain-name-servers = pick-first-value (option domain-name-servers, 10.0.0.1);')).dynamic).toMatchObject({ servers: [], expression: 'pick-first-value (option domain-name-servers, 10.0.0.1)' });
    expect(option6(`option my-dns code 6 = array of ip-address;\n${SUBNET('option my-dns 10.66.0.1;')}`).dynamic?.servers).toEqual(['10.66.0.1']);
  });

  it('a value that is not an address or host name is refused, as dhcpd refuses it', () => {
    expect(conf(SUBNET('option domain-name-servers 10.20.0.53 10.20.0.54;')).refusals[0]?.reason).toMatch(/expecting IP address or hostname/);
    expect(conf(SUBNET('option domain-name-servers "10.20.0.53";')).refusals[0]?.reason).toMatch(/expecting IP address or hostname/);
  });

  it('host names are kept for the rack to resolve, and shown resolved', () => {
    const c = conf(SUBNET('option domain-name-servers ns1.example.org, 10.20.0.53;'));
    expect(c.names).toEqual(['ns1.example.org']);
    expect(subnetOption6(c, '10.20.0.0/24', { resolved: new Map([['ns1.example.org', '192.0.2.1']]) })).toMatchObject({ dynamic: { servers: ['192.0.2.1', '10.20.0.53'], unresolved: [] } });
    expect(subnetOption6(c, '10.20.0.0/24')).toMatchObject({ dynamic: { servers: ['ns1.example.org', '10.20.0.53'], unresolved: ['ns1.example.org'] } });
  });
});

describe('scopes as dhcpd builds them (server/confpars.c) and runs them (server/dhcp.c ack_lease)', () => {
  it('`if` / `elsif` / `else` at subnet scope: the branch an ordinary node takes, and what nodes taking another get', () => {
    const r = option6(SUBNET('if option vendor-class-identifier = "PXEClient" { option domain-name-servers 10.1.0.1; } elsif exists dhcp-parameter-request-list { option domain-name-servers 10.2.0.1; } else { option domain-name-servers 10.3.0.1; }'));
    expect(r.dynamic?.servers).toEqual(['10.2.0.1']);
    expect(r.variants.map((v) => [v.who, v.option6?.servers])).toEqual([['nodes for which `option vendor-class-identifier = "PXEClient"` holds', ['10.1.0.1']]]);
  });

  it('a host without a fixed address still applies to its node on a dynamic lease, after the pool', () => {
    const r = option6(`subnet 10.20.0.0 netmask 255.255.255.0 { pool { range 10.20.0.100 10.20.0.199; option domain-name-servers 10.5.0.1; } }\nhost h { hardware ethernet 52:54:00:AA:00:02; option domain-name-servers 10.6.0.1; }`);
    expect(r.dynamic?.servers).toEqual(['10.5.0.1']);
    expect(r.variants.map((v) => [v.who, v.option6?.servers])).toEqual([['the node with MAC 52:54:00:aa:00:02 (host h)', ['10.6.0.1']]]);
  });

  it('classes: the first declared matching class wins over a later one (server/class.c check order, run last to first)', () => {
    const text = `class "a" { match if exists dhcp-parameter-request-list; option domain-name-servers 10.7.0.1; }\nclass "b" { match if exists dhcp-parameter-request-list; option domain-name-servers 10.8.0.1; }\n${SUBNET('option domain-name-servers 10.20.0.53;')}`;
    expect(option6(text).dynamic?.servers).toEqual(['10.7.0.1']);
  });

  it('`on commit` and `switch` blocks that set option 6 are named, not counted', () => {
    const r = option6(SUBNET('option domain-name-servers 10.20.0.53; switch (option vendor-class-identifier) { case "PXEClient": option domain-name-servers 10.9.0.1; default: option domain-name-servers 10.9.0.2; }'));
    expect(r.dynamic?.servers).toEqual(['10.20.0.53']);
    expect(r.notes).toEqual([expect.stringMatching(/^option 6 is set inside `switch \(option vendor-class-identifier\)` \(dhcpd\.conf:3\)/)]);
  });

  it.each([
    ['pool outside a subnet or shared-network', 'group { pool { range 10.20.0.1 10.20.0.2; } }', /pool declared outside of network/],
    ['pool with no range', SUBNET('pool { option domain-name-servers 10.1.1.1; }'), /Pool declaration with no address range/],
    ['range in a pool of a shared-network before its subnet', 'shared-network s { pool { range 10.20.0.1 10.20.0.2; } subnet 10.20.0.0 netmask 255.255.255.0 { } }', /address range not on network/],
    ['subnet inside a host', 'host h { subnet 10.20.0.0 netmask 255.255.255.0 { } }', /subnet declarations not allowed here/],
    ['host bits in the subnet number', 'subnet 10.20.0.1 netmask 255.255.255.0 { }', /bad subnet number\/mask combination/],
    ['an option definition inside a subnet', SUBNET('option foo code 250 = text;'), /option definitions may not be scoped/],
    ['elsif with no if', SUBNET('elsif exists host-name { }'), /expecting a parameter or declaration/],
    ['a block not closed', 'subnet 10.20.0.0 netmask 255.255.255.0 { range 10.20.0.1 10.20.0.2;', /unexpected end of file/],
    ['a closing brace with no block', `${SUBNET('')}}`, /expecting a parameter or declaration/],
    ['a statement with no semicolon before a brace', 'subnet 10.20.0.0 netmask 255.255.255.0 { range 10.20.0.1 10.20.0.2 }', /no closing ';'/],
  ])('a file dhcpd refuses is reported as refused: %s', (_name, text, rule) => {
    expect(conf(text).refusals.map((p) => p.reason).join('\n')).toMatch(rule);
  });
});

describe('include files (dhcpd.conf(5): read "as though it were entered in place of the include statement")', () => {
  const text = SUBNET('include "/etc/dhcp/extra.conf";');

  it('asks for the file, then reads it in the scope of its include line', () => {
    expect(conf(text).wanted).toEqual([{ path: '/etc/dhcp/extra.conf', at: { file: 'dhcpd.conf', line: 3 } }]);
    const r = option6(text, '10.20.0.0/24', { '/etc/dhcp/extra.conf': { text: '# extra\noption domain-name-servers 10.99.0.53;\n' } });
    expect(r.dynamic?.setBy).toEqual([{ statement: 'option domain-name-servers 10.99.0.53;', at: '/etc/dhcp/extra.conf:2', scope: 'subnet 10.20.0.0/24' }]);
  });

  it('a file that could not be read is reported unread, never ignored; an include loop is not followed', () => {
    expect(conf(text, { '/etc/dhcp/extra.conf': { unread: 'Permission denied' } }).unread).toEqual([{ at: { file: 'dhcpd.conf', line: 3 }, reason: '`include "/etc/dhcp/extra.conf"` could not be read (Permission denied): what it sets is unknown' }]);
    const loop = conf(text, { '/etc/dhcp/extra.conf': { text: 'include "/etc/dhcp/extra.conf";' } });
    expect(loop.unread.map((p) => p.reason)).toEqual([expect.stringMatching(/a loop/)]);
  });

  it('an included file cannot close the block its include line is in', () => {
    expect(conf(text, { '/etc/dhcp/extra.conf': { text: '} option domain-name-servers 10.99.0.53;' } }).refusals.map((p) => p.reason)).toEqual([expect.stringMatching(/closes a block its include line is in/)]);
  });
});

describe('hostile files: bounded depth and size, never a crash (issue 27: a worker died on 200 KB of nested groups)', () => {
  it('12,000 nested groups, or 200 KB of them, are not read, and say why', () => {
    for (const depth of [12_000, 200_000 / 'group{'.length]) {
      const result = parseDhcpdConf({ path: 'dhcpd.conf', text: `${'group {'.repeat(depth)}${'}'.repeat(depth)}` });
      expect(result).toEqual({ ok: false, reason: `blocks nested more than ${DEFAULT_PARSE_LIMITS.maxDepth} deep (at dhcpd.conf:1)` });
    }
  });

  it('more declarations than the bound, one enormous statement, or a file over the size bound: not read', () => {
    expect(parseDhcpdConf({ path: 'f', text: 'group {}'.repeat(DEFAULT_PARSE_LIMITS.maxNodes + 1) })).toMatchObject({ ok: false, reason: expect.stringMatching(/^more than 100000 declarations/) });
    expect(parseDhcpdConf({ path: 'f', text: `option domain-name-servers ${'10.0.0.1, '.repeat(10_000)}10.0.0.1;` })).toMatchObject({ ok: false, reason: expect.stringMatching(/runs over 20000 tokens/) });
    expect(parseDhcpdConf({ path: 'f', text: '#'.repeat(DEFAULT_PARSE_LIMITS.maxChars + 1) })).toMatchObject({ ok: false, reason: expect.stringMatching(/characters, over the/) });
  });

  it('a condition nested 15,000 deep is judged unknown, not recursed into', () => {
    const r = option6(SUBNET(`if ${'not '.repeat(15_000)}exists host-name { option domain-name-servers 10.1.1.1; }`));
    expect(r.dynamic?.servers).toEqual([]);
    expect(r.variants).toHaveLength(1);
    expect(r.variants[0]?.who.length).toBeLessThan(300);
  });

  it('any node sends a parameter request list and nothing else is assumed of it', () => {
    expect([...ANY_NODE.sends]).toEqual(['dhcp-message-type', 'dhcp-parameter-request-list']);
    expect(ANY_NODE.sendsOnly).toBe(false);
  });
});
