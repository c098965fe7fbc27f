import { checkJob } from '../../jobs/check-job.ts';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { probeSoaDirect } from '../../src/features/resolver/soa-direct.ts';
import { silentLogger } from '../../src/core/log.ts';
import { onPath, startDnsmasq, type RunningDnsmasq } from '../../lab/rack-sim/index.ts';
import { generateKeyPair, startSshServer, type SshServerOptions, type SshSimServer } from '../../lab/ssh-sim/index.ts';
import type { Report } from '../../src/core/report.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';

const resolverCheckJob = checkJob(resolverCheck);

// Real parts: an ssh2 server on loopback running commands in /bin/sh, the installed dig, and
// dnsmasq children (authoritative for maas-internal; a validating forwarder that SERVFAILs).

const client = generateKeyPair('chatops-worker');
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  for (const program of ['dig', 'dnsmasq']) {
    if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq (.ci/run does this)`);
  }
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dnsmasq(mode: 'authoritative' | 'servfail', serial?: number): Promise<RunningDnsmasq> {
  const running = await startDnsmasq({ mode, ...(serial ? { serial } : {}) });
  cleanups.push(() => running.close());
  return running;
}

/** A UDP socket that reads every query and answers none. */
async function swallower(): Promise<{ port: number; received: () => number }> {
  const socket: Socket = createSocket('udp4');
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return { port: socket.address().port, received: () => received };
}

async function rack(options: Partial<SshServerOptions> = {}): Promise<SshSimServer> {
  const server = await startSshServer({ authorizedKey: client.publicKey, ...options });
  cleanups.push(() => server.close());
  return server;
}

interface SiteSpec {
  resolverPort: number;
  ssh?: SshSimServer;
  hostKey?: string | null;
  probe?: 'ssh' | 'direct';
}

function siteYaml(name: string, spec: SiteSpec): string {
  const lines = [`  ${name}:`, '    maas: region-a', '    rack:', `      resolver: 127.0.0.1:${spec.resolverPort}`, '      forwarder: 10.20.0.53'];
  if (spec.probe) lines.push(`      probe: ${spec.probe}`);
  if (spec.ssh) {
    const pin = spec.hostKey === null ? '' : `, hostKey: "${spec.hostKey ?? spec.ssh.hostKeyFingerprint}"`;
    lines.push(`      ssh: { host: 127.0.0.1, port: ${spec.ssh.port}, user: ops, privateKey: env:RACK_KEY${pin} }`);
  }
  return lines.join('\n');
}

async function runCheck(target: string, sites: Record<string, SiteSpec | null>, connects: string[] = []): Promise<Report[]> {
  const yaml = [
    'maas:',
    '  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: "a:b:c" }',
    'sites:',
    ...Object.entries(sites).map(([name, spec]) => (spec ? siteYaml(name, spec) : `  ${name}:\n    maas: region-a`)),
  ].join('\n');
  const { config } = parseConfigText(yaml, { path: 'test.yaml', env: { RACK_KEY: client.privateKey } });
  const adapters: Adapters = {
    maas: () => {
      throw new Error('resolver-check must not call MAAS');
    },
    kube: () => {
      throw new Error('resolver-check must not call kube');
    },
    ssh: createSshConnector({ onConnect: (host) => connects.push(host) }),
  };
  return resolverCheckJob.run({ config, adapters, log: silentLogger() }, { target });
}

async function checkOne(spec: SiteSpec): Promise<Report> {
  const [report] = await runCheck('site-b', { 'site-b': spec });
  if (!report) throw new Error('no report');
  return report;
}

describe('resolver-check over SSH, real dig, real dnsmasq', () => {
  it('finds a healthy resolver and reports the SOA serial dnsmasq serves', async () => {
    const dns = await dnsmasq('authoritative', 2026113001);
    const ssh = await rack();
    const report = await checkOne({ resolverPort: dns.port, ssh });
    expect(report).toMatchObject({ kind: 'resolver-check', target: 'site-b', status: 'ok' });
    expect(report.verdict).toBe(`The resolver of site-b (127.0.0.1:${dns.port}) answers maas-internal, SOA serial 2026113001`);
    expect(report.findings[0]).toMatchObject({
      code: 'RESOLVER_OK',
      evidence: { status: 'NOERROR', serial: 2026113001, statusLine: expect.stringMatching(/^;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: \d+$/) },
    });
    expect(ssh.commands).toEqual([`dig @127.0.0.1 -p ${dns.port} maas-internal SOA +time=2 +tries=1`]);
  });

  it('reports RESOLVER_SERVFAIL with the status line as dig printed it and the runbook fix', async () => {
    const dns = await dnsmasq('servfail');
    const ssh = await rack();
    const report = await checkOne({ resolverPort: dns.port, ssh });
    expect(report.status).toBe('critical');
    expect(report.verdict).toBe(`The resolver of site-b (127.0.0.1:${dns.port}) answers SERVFAIL for its own zone maas-internal`);
    const finding = report.findings[0];
    expect(finding).toMatchObject({
      code: 'RESOLVER_SERVFAIL',
      evidence: {
        site: 'site-b',
        resolver: `127.0.0.1:${dns.port}`,
        zone: 'maas-internal',
        probe: 'dig on the rack (ops@127.0.0.1) over SSH',
        status: 'SERVFAIL',
        statusLine: expect.stringMatching(/^;; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: \d+$/),
      },
    });
    expect(finding?.fix).toMatch(/dns_servers = 10\.20\.0\.53, allow_dns off/);
  });

  it('reports RESOLVER_NO_REPLY for a resolver that swallows queries (dig exits 9)', async () => {
    const silent = await swallower();
    const ssh = await rack();
    const report = await checkOne({ resolverPort: silent.port, ssh });
    expect(report.findings[0]).toMatchObject({
      code: 'RESOLVER_NO_REPLY',
      severity: 'critical',
      evidence: { error: `;; communications error to 127.0.0.1#${silent.port}: timed out` },
    });
    expect(silent.received()).toBe(1);
  });

  it('reports PROBE_FAILED when dig is missing on the rack (exit 127)', async () => {
    const dns = await dnsmasq('authoritative');
    const emptyPath = mkdtempSync(join(tmpdir(), 'no-dig-'));
    cleanups.push(() => rmSync(emptyPath, { recursive: true, force: true }));
    const ssh = await rack({ env: { PATH: emptyPath } });
    const report = await checkOne({ resolverPort: dns.port, ssh });
    expect(report.status).toBe('error');
    expect(report.findings[0]).toMatchObject({
      code: 'PROBE_FAILED',
      evidence: { reason: 'dig is not installed on the rack (exit status 127)' },
      fix: expect.stringContaining('bind9-dnsutils'),
    });
  });

  it('reports PROBE_FAILED with the offered fingerprint for an unpinned rack, and runs nothing there', async () => {
    const dns = await dnsmasq('authoritative');
    const ssh = await rack();
    const report = await checkOne({ resolverPort: dns.port, ssh, hostKey: null });
    expect(report.status).toBe('error');
    expect(report.findings[0]?.code).toBe('PROBE_FAILED');
    expect(String(report.findings[0]?.evidence.reason)).toContain(`offered ssh-ed25519 ${ssh.hostKeyFingerprint}`);
    expect(String(report.findings[0]?.evidence.reason)).toContain(`hostKey: "${ssh.hostKeyFingerprint}" under sites.site-b.rack.ssh`);
    expect(ssh.authenticated).toBe(0);
    expect(ssh.commands).toEqual([]);
  });

  it('reports PROBE_FAILED for a rack whose key does not match the pin', async () => {
    const dns = await dnsmasq('authoritative');
    const ssh = await rack();
    const report = await checkOne({ resolverPort: dns.port, ssh, hostKey: generateKeyPair().fingerprint });
    expect(String(report.findings[0]?.evidence.reason)).toMatch(/^SSH refused: the host key of 127\.0\.0\.1:\d+ matches none of the 1 pinned/);
    expect(ssh.commands).toEqual([]);
  });

  it('checks every site for `all`: one SSH connection per rack, a site without a rack is noted, not failed', async () => {
    const healthy = await dnsmasq('authoritative');
    const broken = await dnsmasq('servfail');
    const rackA = await rack();
    const rackB = await rack();
    const connects: string[] = [];
    const reports = await runCheck('all', { 'site-a': { resolverPort: healthy.port, ssh: rackA }, 'site-b': { resolverPort: broken.port, ssh: rackB }, 'site-c': null }, connects);
    expect(reports.map((r) => [r.target, r.status, r.findings[0]?.code])).toEqual([
      ['site-a', 'ok', 'RESOLVER_OK'],
      ['site-b', 'critical', 'RESOLVER_SERVFAIL'],
      ['site-c', 'ok', 'RESOLVER_NOT_CONFIGURED'],
    ]);
    expect(connects).toHaveLength(2);
    expect([rackA.sessions, rackB.sessions]).toEqual([1, 1]);
  });
});

describe('probe: direct, with node’s resolver against real dnsmasq', () => {
  it.each([
    ['authoritative', 'RESOLVER_OK', 'ok'],
    ['servfail', 'RESOLVER_SERVFAIL', 'critical'],
  ] as const)('%s dnsmasq gives %s', async (mode, code, status) => {
    const dns = await dnsmasq(mode);
    const report = await checkOne({ resolverPort: dns.port, probe: 'direct' });
    expect(report).toMatchObject({ status, findings: [{ code, evidence: { probe: "the bot's own resolver (probe: direct)" } }] });
  });

  it('gives RESOLVER_NO_REPLY for a silent resolver after one try', async () => {
    const silent = await swallower();
    const report = await checkOne({ resolverPort: silent.port, probe: 'direct' });
    expect(report.findings[0]).toMatchObject({ code: 'RESOLVER_NO_REPLY', evidence: { error: 'querySoa ETIMEOUT maas-internal' } });
    expect(silent.received()).toBe(1);
  });

  it('maps an NXDOMAIN and a REFUSED from real dnsmasq to their status names', async () => {
    const dns = await dnsmasq('authoritative');
    expect(await probeSoaDirect({ host: '127.0.0.1', port: dns.port }, 'nosuch.maas-internal')).toMatchObject({ outcome: 'reply', status: 'NXDOMAIN', soa: null });
    expect(await probeSoaDirect({ host: '127.0.0.1', port: dns.port }, 'example.com')).toMatchObject({ outcome: 'reply', status: 'REFUSED', soa: null });
  });
});
