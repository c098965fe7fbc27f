import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText, type SiteConfig } from '../../src/core/config.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { probeSiteResolver } from '../../src/features/resolver/site-probe.ts';
import { generateKeyPair, startSshServer, type SshSimServer } from '../../lab/ssh-sim/index.ts';
import { Secret } from '../../src/core/secret.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';

// Names from the config (and, through it, from MAAS and Slack) must never be read by the rack's
// shell as code: the config rejects them, and if one got past it, dig receives it as one literal
// argument. A `dig` stub on the SSH server's PATH records the argv it was given; a canary file
// that only an injected command would create proves that nothing else ran.

const client = generateKeyPair('chatops-worker');

describe('config validation rejects shell syntax in names that reach the rack', () => {
  const base = (site: string, rack: string) =>
    `maas:\n  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: "a:b:c" }\nsites:\n  ${site}:\n    maas: region-a\n    rack:\n${rack}`;
  const rack = (resolver: string, zone: string) => `      resolver: ${JSON.stringify(resolver)}\n      zone: ${JSON.stringify(zone)}\n      probe: direct\n`;

  it.each([
    ['a zone with $(…)', base('site-b', rack('10.20.0.2', 'maas-internal$(touch /tmp/x)')), /sites\.site-b\.rack\.zone: must be a DNS zone name/],
    ['a zone with backticks', base('site-b', rack('10.20.0.2', 'maas`id`')), /rack\.zone/],
    ['a zone with ;', base('site-b', rack('10.20.0.2', 'maas; reboot')), /rack\.zone/],
    ['a zone with quotes', base('site-b', rack('10.20.0.2', `maas'"`)), /rack\.zone/],
    ['a zone with a newline', base('site-b', rack('10.20.0.2', 'maas\nreboot')), /rack\.zone/],
    ['a zone that dig would read as an option', base('site-b', rack('10.20.0.2', '-fmaas')), /rack\.zone/],
    ['a resolver with ;', base('site-b', rack('10.20.0.2;reboot', 'maas-internal')), /rack\.resolver: must be an address/],
    ['a resolver with $(…)', base('site-b', rack('$(reboot)', 'maas-internal')), /rack\.resolver/],
    ['a site name with ;', base('"site;b"', rack('10.20.0.2', 'maas-internal')), /sites\.site;b/],
    ['a site name with backticks', base('"site`id`"', rack('10.20.0.2', 'maas-internal')), /sites\.site`id`/],
  ])('%s', (_name, yaml, message) => {
    const parse = () => parseConfigText(yaml, { path: 'test.yaml', env: {} });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(message);
  });

  it('accepts the same config with clean names (the rows above fail for the name alone)', () => {
    const { config } = parseConfigText(base('site-b', rack('10.20.0.2', 'maas-internal')), { path: 'test.yaml', env: {} });
    expect(config.sites['site-b']?.rack?.zone).toBe('maas-internal');
  });
});

describe('a hostile name that got past validation reaches dig as one literal argument', () => {
  let dir: string;
  let server: SshSimServer;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'inject-'));
    // The recording dig: each argument NUL-terminated into $ARGV_FILE, then dig's "no reply".
    const stubDir = join(dir, 'stub');
    mkdirSync(stubDir);
    writeFileSync(join(stubDir, 'dig'), '#!/bin/sh\nfor a in "$@"; do printf \'%s\\0\' "$a"; done > "$ARGV_FILE"\necho ";; no servers could be reached"\nexit 9\n');
    chmodSync(join(stubDir, 'dig'), 0o755);
    server = await startSshServer({ authorizedKey: client.publicKey, pathPrefix: [stubDir], env: { ARGV_FILE: join(dir, 'argv') } });
  });

  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function site(resolverHost: string, zone: string): SiteConfig {
    return {
      name: 'site-b',
      maas: 'region-a',
      machines: {},
      vmHostDefaults: {},
      vmHosts: {},
      rack: {
        resolverHost,
        resolverPort: 53,
        zone,
        probe: 'ssh',
        ssh: { host: server.host, port: server.port, user: 'ops', privateKey: new Secret(client.privateKey, 'test'), hostKey: server.hostKeyFingerprint },
      },
    };
  }

  const canary = () => join(dir, 'CANARY');
  const hostileZones = [
    'maas$(touch CANARY)',
    'maas`touch CANARY`',
    'maas; touch CANARY',
    "maas' ; touch CANARY; echo '",
    'maas" ; touch CANARY; echo "',
    'maas\ntouch CANARY',
    'maas | touch CANARY',
    'maas && touch CANARY #',
  ];

  it.each(hostileZones)('zone %j', async (template) => {
    const zone = template.replace('CANARY', canary());
    const snapshot = await probeSiteResolver(site('127.0.0.1', zone), createSshConnector());
    expect(snapshot.observation.outcome).toBe('no-reply');
    const argv = readFileSync(join(dir, 'argv'), 'utf8').split('\0').slice(0, -1);
    expect(argv).toEqual(['@127.0.0.1', '-p', '53', zone, 'SOA', '+time=2', '+tries=1']);
    expect(existsSync(canary())).toBe(false);
    expect(server.commands).toHaveLength(1);
    expect(server.sessions).toBe(1);
  });

  it('a hostile resolver address', async () => {
    const resolver = `127.0.0.1;touch ${canary()}`;
    await probeSiteResolver(site(resolver, 'maas-internal'), createSshConnector());
    const argv = readFileSync(join(dir, 'argv'), 'utf8').split('\0').slice(0, -1);
    expect(argv).toEqual([`@${resolver}`, '-p', '53', 'maas-internal', 'SOA', '+time=2', '+tries=1']);
    expect(existsSync(canary())).toBe(false);
    expect(server.commands).toHaveLength(1);
  });
});
