import { checkJob } from '../../jobs/check-job.ts';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { delimiter } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { probeSoaDirect } from '../../src/features/resolver/soa-direct.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createDigStub, digPathPrefix, onPath, startLabRack, startRack, type RackMode, type SimulatedRack } from '../../lab/rack-sim/index.ts';
import { generateKeyPair, startSshServer } from '../../lab/ssh-sim/index.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';
import { parseDig, type DigResult } from '../../src/adapters/ssh/dig.ts';

const resolverCheckJob = checkJob(resolverCheck);

// The lab's rack without dnsmasq or dig: a DNS responder in node and a dig stand-in, checked
// against the real dig where it is installed so that the stand-in cannot drift from it.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rack(mode: RackMode, serial?: number): Promise<SimulatedRack> {
  const r = await startRack({ mode, ...(serial ? { serial } : {}) });
  cleanups.push(() => r.close());
  return r;
}

function stubDir(): string {
  const stub = createDigStub();
  cleanups.push(() => stub.cleanup());
  return stub.dir;
}

function runDig(port: number, zone: string, path?: string): Promise<DigResult> {
  const env = path ? { ...process.env, PATH: `${path}${delimiter}${process.env.PATH ?? ''}` } : process.env;
  return new Promise((resolve) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), zone, 'SOA', '+time=1', '+tries=1'], { env }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve(parseDig(stdout, stderr, code, zone));
    });
  });
}

const summary = (r: DigResult) => ({ status: r.status, noReply: r.noReply, serial: r.soa?.serial ?? null, aa: r.flags.includes('aa'), exitCode: r.exitCode });

describe('simulated rack resolver', () => {
  it.each([
    ['healthy', 'maas-internal', { status: 'NOERROR', noReply: false, serial: 2026113002, aa: true, exitCode: 0 }],
    ['healthy', 'nosuch.maas-internal', { status: 'NXDOMAIN', noReply: false, serial: null, aa: true, exitCode: 0 }],
    ['servfail', 'maas-internal', { status: 'SERVFAIL', noReply: false, serial: null, aa: false, exitCode: 0 }],
    ['refused', 'maas-internal', { status: 'REFUSED', noReply: false, serial: null, aa: false, exitCode: 0 }],
    ['silent', 'maas-internal', { status: null, noReply: true, serial: null, aa: false, exitCode: 9 }],
  ] as const)('%s, %s: the dig stand-in reads it as expected', async (mode, zone, expected) => {
    const r = await rack(mode, 2026113002);
    expect(summary(await runDig(r.port, zone, stubDir()))).toEqual(expected);
    expect(r.queries).toBe(1);
  });

  it.skipIf(!onPath('dig'))('the real dig reads every mode the same way (skipped where bind9-dnsutils is absent)', async () => {
    for (const mode of ['healthy', 'servfail', 'refused', 'silent'] as const) {
      const r = await rack(mode);
      const real = await runDig(r.port, 'maas-internal');
      const stub = await runDig(r.port, 'maas-internal', stubDir());
      expect({ mode, ...summary(stub) }).toEqual({ mode, ...summary(real) });
      expect(stub.statusLine?.replace(/id: \d+/, '')).toBe(real.statusLine?.replace(/id: \d+/, ''));
    }
  });

  it('is put on PATH only where no dig is installed', () => {
    const without = digPathPrefix('/nonexistent-bin');
    cleanups.push(() => without.cleanup());
    expect(without.stubbed).toBe(true);
    expect(onPath('dig', without.pathPrefix.join(delimiter))).toBe(true);
    const withDig = digPathPrefix(without.pathPrefix.join(delimiter));
    expect(withDig).toMatchObject({ stubbed: false, pathPrefix: [] });
  });

  it('the dig stand-in says connection refused and exits 9 when nothing listens', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    const result = await runDig(port, 'maas-internal', stubDir());
    expect(result).toMatchObject({ noReply: true, exitCode: 9, errorLine: `;; communications error to 127.0.0.1#${port}: connection refused` });
  });

  it.each([
    ['healthy', { outcome: 'reply', status: 'NOERROR' }],
    ['servfail', { outcome: 'reply', status: 'SERVFAIL' }],
    ['refused', { outcome: 'reply', status: 'REFUSED' }],
    ['silent', { outcome: 'no-reply' }],
  ] as const)('%s answers node’s resolver too (probe: direct)', async (mode, expected) => {
    const r = await rack(mode);
    expect(await probeSoaDirect({ host: r.host, port: r.port }, 'maas-internal', { timeoutMs: 300 })).toMatchObject(expected);
  });
});

describe('the lab rack: SSH server + dig stand-in + simulated resolver, no dnsmasq or dig needed', () => {
  it('is SERVFAIL, then healthy once its mode changes, through the real job', async () => {
    const client = generateKeyPair('lab-worker');
    const resolver = await rack('servfail', 2026113003);
    const ssh = await startSshServer({ authorizedKey: client.publicKey, pathPrefix: [stubDir()] });
    cleanups.push(() => ssh.close());
    const yaml = [
      'maas:',
      '  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: "a:b:c" }',
      'sites:',
      '  site-b:',
      '    maas: region-a',
      '    rack:',
      `      resolver: 127.0.0.1:${resolver.port}`,
      `      ssh: { host: 127.0.0.1, port: ${ssh.port}, user: ops, privateKey: env:RACK_KEY, hostKey: "${ssh.hostKeyFingerprint}" }`,
    ].join('\n');
    const { config } = parseConfigText(yaml, { path: 'lab.yaml', env: { RACK_KEY: client.privateKey } });
    const ctx = { config, adapters: { maas: () => { throw new Error('unused'); }, kube: () => { throw new Error('unused'); }, ssh: createSshConnector() }, log: silentLogger() };

    const [before] = await resolverCheckJob.run(ctx, { target: 'site-b' });
    expect(before).toMatchObject({ status: 'critical', findings: [{ code: 'RESOLVER_SERVFAIL' }] });

    resolver.setMode('healthy');
    const [after] = await resolverCheckJob.run(ctx, { target: 'site-b' });
    expect(after).toMatchObject({ status: 'ok', findings: [{ code: 'RESOLVER_OK', evidence: { serial: 2026113003 } }] });
    expect(ssh.commands).toHaveLength(2);
    expect(resolver.queries).toBe(2);
  });
});

describe('startLabRack', () => {
  it('stands up a rack whose config block the real config loader accepts, with dig present either way', async () => {
    const client = generateKeyPair('lab-worker');
    const labRack = await startLabRack({ mode: 'servfail', authorizedKey: client.publicKey });
    cleanups.push(() => labRack.close());
    const config = {
      maas: { 'region-a': { url: 'http://127.0.0.1:5240/MAAS', apiKey: 'env:MAAS_KEY' } },
      sites: { 'site-b': { maas: 'region-a', rack: labRack.rackConfig('env:RACK_KEY', { forwarder: '10.20.0.53' }) } },
    };
    const loaded = parseConfigText(stringify(config), { path: 'lab.yaml', env: { RACK_KEY: client.privateKey, MAAS_KEY: 'a:b:c' } });
    const ctx = { config: loaded.config, adapters: { maas: () => { throw new Error('unused'); }, kube: () => { throw new Error('unused'); }, ssh: createSshConnector() }, log: silentLogger() };
    const [report] = await resolverCheckJob.run(ctx, { target: 'site-b' });
    expect(report).toMatchObject({ status: 'critical', findings: [{ code: 'RESOLVER_SERVFAIL', fix: expect.stringContaining('dns_servers = 10.20.0.53') }] });
    expect(labRack.digStubbed).toBe(!onPath('dig'));
    labRack.resolver.setMode('healthy');
    const [healed] = await resolverCheckJob.run(ctx, { target: 'site-b' });
    expect(healed?.status).toBe('ok');
  });
});
