import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientOption6, parseDhcpdConf, subnetOption6, type ClientFacts, type DhcpdConf } from '../../../src/features/dhcpd-conf/index.ts';

// What a real ISC dhcpd 4.4.3 handed a real client for 44 configs (test/fixtures/dhcpd-4.4.3/README.md).

interface Row {
  name: string;
  subnet: string;
  dhcpd_t_ok: boolean;
  option6: string[] | null;
  config: string;
  includes?: Record<string, string>;
}

const rows: Row[] = readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'dhcpd-4.4.3', 'answers.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Row);

/** The recorded client: isc-dhcp-client with Debian's dhclient.conf (message type, request list, host name; no vendor class, no client architecture). */
const CLIENT: ClientFacts & { mac: string } = {
  mac: '52:54:00:aa:00:01',
  sends: new Set(['dhcp-message-type', 'dhcp-parameter-request-list', 'host-name', 'dhcp-requested-address', 'dhcp-server-identifier']),
  sendsOnly: true,
};

/** Rows the reading gets wrong, each with why. A listed row must still differ, so the list cannot go stale. */
const EXCEPTIONS: Record<string, string> = {};

/** What dhcpd said about the two files it refused (its messages, from server/confpars.c). */
const REFUSED_BECAUSE: Record<string, RegExp> = {
  '27-group-inside-shared': /empty shared-network decl/,
  '32-subnet6-in-v4-conf': /subnet6 statement is only supported in DHCPv6 mode/,
};

function read(row: Row): DhcpdConf {
  const includes = new Map(Object.entries(row.includes ?? {}).map(([path, text]) => [path, { text }]));
  const parsed = parseDhcpdConf({ path: '/var/lib/maas/dhcpd.conf', text: row.config }, includes);
  if (!parsed.ok) throw new Error(`${row.name} not read: ${parsed.reason}`);
  return parsed.conf;
}

/** Host names as the rack resolves them (what the bot runs there: getent ahostsv4, first address); here the test machine is the rack. */
function resolvedOnThisMachine(names: readonly string[]): Map<string, string | undefined> {
  return new Map(names.map((n) => [n, execFileSync('getent', ['ahostsv4', n], { encoding: 'utf8' }).split(/\s+/)[0]]));
}

/** Every string reachable from a value (the reading's scopes point at each other, so no JSON.stringify). */
function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object' || seen.has(value)) return [];
  seen.add(value);
  return Object.values(value as Record<string, unknown>).flatMap((v) => stringsIn(v, seen));
}

function received(row: Row): string[] | null | 'refused' {
  const conf = read(row);
  if (conf.refusals.length) return 'refused';
  const got = clientOption6(conf, row.subnet, CLIENT, { resolved: resolvedOnThisMachine(conf.names) });
  if (got === undefined) throw new Error(`${row.name}: no subnet ${row.subnet}`);
  return got === null ? null : got.servers;
}

describe('DHCP option 6 as ISC dhcpd 4.4.3 handed it to a real client, every recorded config', () => {
  it('holds the 44 recorded configs, 2 of them refused by dhcpd -t', () => {
    expect(rows).toHaveLength(44);
    expect(rows.filter((r) => !r.dhcpd_t_ok).map((r) => r.name)).toEqual(Object.keys(REFUSED_BECAUSE));
  });

  it.each(rows.map((r) => [r.name, r] as const))('%s', (name, row) => {
    const expected = row.dhcpd_t_ok ? row.option6 : 'refused';
    if (name in EXCEPTIONS) {
      expect(received(row), EXCEPTIONS[name]).not.toEqual(expected);
      return;
    }
    expect(received(row)).toEqual(expected);
    if (!row.dhcpd_t_ok) expect(read(row).refusals.map((p) => p.reason).join('\n')).toMatch(REFUSED_BECAUSE[name] as RegExp);
  });
});

describe('per subnet: what an ordinary dynamic node gets, and every narrower scope that gives some nodes something else', () => {
  const row = (name: string) => rows.find((r) => r.name === name) as Row;
  const report = (name: string) => {
    const found = subnetOption6(read(row(name)), '10.20.0.0/24');
    if (!found.found) throw new Error(found.problem);
    return found;
  };

  it('06, a MAAS pool snippet: ordinary nodes get the pool\'s servers; MAAS\'s fixed-address hosts keep the subnet\'s (they lease from no pool)', () => {
    const r = report('06-maas-pool-snippet-option6');
    expect(r.dynamic?.servers).toEqual(['10.99.0.53']);
    expect(r.dynamic?.setBy.at(-1)).toEqual({ statement: 'option domain-name-servers 10.99.0.53;', at: '/var/lib/maas/dhcpd.conf:96', scope: 'pool' });
    expect(r.variants.map((v) => [v.who, v.option6?.servers])).toEqual([
      ['the node with MAC 52:54:00:b0:00:01 (host node-b01-52-54-00-b0-00-01, fixed address)', ['10.20.0.2', '10.0.0.5']],
      ['the node with MAC 52:54:00:b0:00:02 (host node-b02-52-54-00-b0-00-02, fixed address)', ['10.20.0.2', '10.0.0.5']],
    ]);
  });

  it('07, a MAAS host snippet: the subnet\'s servers for ordinary nodes, the host\'s for that one node, with its line', () => {
    const r = report('07-maas-host-snippet-option6');
    expect(r.dynamic?.servers).toEqual(['10.20.0.2', '10.0.0.5']);
    expect(r.variants).toHaveLength(1);
    expect(r.variants[0]).toMatchObject({ who: 'the node with MAC 52:54:00:aa:00:01 (host node-b01-52-54-00-b0-00-01, fixed address)', at: '/var/lib/maas/dhcpd.conf:147' });
    expect(r.variants[0]?.option6?.setBy.at(-1)).toEqual({ statement: 'option domain-name-servers 10.99.0.53;', at: '/var/lib/maas/dhcpd.conf:151', scope: 'host node-b01-52-54-00-b0-00-01' });
  });

  it('17 and 16, a class and an `if` on the MAC: what nodes that match get, since the file alone cannot say which nodes do', () => {
    const klass = report('17-maas-global-snippet-class');
    expect(klass.dynamic?.servers).toEqual(['10.20.0.2', '10.0.0.5']);
    expect(klass.variants.map((v) => [v.who, v.option6?.servers])).toEqual([['nodes matching class "kvm" (match if substring (hardware, 1, 3) = 52:54:00)', ['10.99.0.53']]]);
    const conditional = report('16-maas-subnet-snippet-if');
    expect(conditional.variants.map((v) => [v.who, v.option6?.servers])).toEqual([['nodes for which `substring (hardware, 1, 3) = 52:54:00` holds', ['10.99.0.53']]]);
  });

  it('18 and 18b, a global `if exists dhcp-parameter-request-list`: every node sends one, so it counts for ordinary nodes unless the subnet overrides it', () => {
    expect(report('18-maas-global-snippet-if')).toMatchObject({ dynamic: { servers: ['10.20.0.2', '10.0.0.5'] }, variants: [] });
    expect(report('18b-no-subnet-option6-global-if')).toMatchObject({ dynamic: { servers: ['10.99.0.53'] }, variants: [] });
  });

  it('24, two subnets in one shared network: nodes that lease in the other one get its servers', () => {
    const r = report('24-two-subnets-one-shared');
    expect(r.dynamic?.servers).toEqual(['10.20.0.53']);
    expect(r.variants.map((v) => [v.who, v.option6?.servers])).toEqual([['nodes that lease in 10.20.1.0/24 (the same shared-network vlan-5001)', ['10.20.1.53']]]);
  });

  it('37, a subnet declared twice: dhcpd uses the last declaration, which has no range, so dynamic nodes get no lease', () => {
    const r = report('37-subnet-twice');
    expect(r.dynamic).toBeNull();
    expect(r.declaredAt).toBe('/var/lib/maas/dhcpd.conf:7');
    expect(r.notes.join('\n')).toContain('declared 2 times (/var/lib/maas/dhcpd.conf:3, /var/lib/maas/dhcpd.conf:7): dhcpd uses the last one');
  });

  it('09 and 10, escaped quotes: a string ends at its unescaped quote, so the fake option is text and the hidden one counts', () => {
    expect(report('09-escaped-quote-fake').dynamic?.servers).toEqual(['10.20.0.2', '10.0.0.5']);
    expect(report('10-escaped-quote-hide').dynamic?.setBy.at(-1)).toEqual({ statement: 'option domain-name-servers 10.66.6.6;', at: '/var/lib/maas/dhcpd.conf:93', scope: 'subnet 10.20.0.0/24' });
  });

  it('35, an OMAPI key whose `};` shares the secret\'s line: read as dhcpd reads it, and the secret is nowhere in the reading', () => {
    const conf = read(row('35-key-secret-closing-brace'));
    expect(subnetOption6(conf, '10.20.0.0/24')).toMatchObject({ found: true, dynamic: { servers: ['10.20.0.53'] } });
    expect(stringsIn(conf).some((text) => text.includes('bm90LWEtcmVhbC1rZXktZml4dHVyZS1vbmx5'))).toBe(false);
  });
});
