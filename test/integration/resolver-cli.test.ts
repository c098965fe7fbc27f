import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDigStub, startRack, type SimulatedRack } from '../../lab/rack-sim/index.ts';
import { generateKeyPair, startSshServer, type SshSimServer } from '../../lab/ssh-sim/index.ts';

// `maas-chatops resolver-check` as an operator runs it: the real bin in a child process, a config
// file with a file: private key, an SSH server on loopback, and simulated rack resolvers.

const BIN = join(import.meta.dirname, '../../bin/maas-chatops.js');
const client = generateKeyPair('cli-worker');
let dir: string;
let ssh: SshSimServer;
let broken: SimulatedRack;
let healthy: SimulatedRack;
let cleanupStub: () => void;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'resolver-cli-'));
  const stub = createDigStub();
  cleanupStub = stub.cleanup;
  ssh = await startSshServer({ authorizedKey: client.publicKey, pathPrefix: [stub.dir] });
  broken = await startRack({ mode: 'servfail' });
  healthy = await startRack({ mode: 'healthy', serial: 2026113004 });
  writeFileSync(join(dir, 'rack_ed25519'), client.privateKey, { mode: 0o600 });
  const site = (name: string, port: number, pin: string) =>
    [
      `  ${name}:`,
      '    maas: region-a',
      '    rack:',
      `      resolver: 127.0.0.1:${port}`,
      `      ssh: { host: 127.0.0.1, port: ${ssh.port}, user: ops, privateKey: "file:${join(dir, 'rack_ed25519')}"${pin} }`,
    ].join('\n');
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      'maas:',
      '  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: "env:MAAS_KEY" }',
      'sites:',
      site('site-a', healthy.port, `, hostKey: "${ssh.hostKeyFingerprint}"`),
      site('site-b', broken.port, `, hostKey: "${ssh.hostKeyFingerprint}"`),
      site('site-u', healthy.port, ''),
    ].join('\n'),
  );
});

afterAll(async () => {
  await ssh.close();
  await broken.close();
  await healthy.close();
  cleanupStub();
  rmSync(dir, { recursive: true, force: true });
});

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'resolver-check', ...args, '--config', join(dir, 'config.yaml')], { env: { ...process.env, MAAS_KEY: 'ck:tk:ts' } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

describe('maas-chatops resolver-check', () => {
  it('exits 1 with one JSON report on stdout for a SERVFAIL rack', async () => {
    const { code, stdout } = await cli('site-b', '--json');
    expect(code).toBe(1);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ kind: 'resolver-check', target: 'site-b', status: 'critical', findings: [{ code: 'RESOLVER_SERVFAIL' }] });
  });

  it('exits 0 for a healthy rack and prints the verdict first', async () => {
    const { code, stdout } = await cli('site-a');
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toContain(`The resolver of site-a (127.0.0.1:${healthy.port}) answers maas-internal, SOA serial 2026113004`);
  });

  it('exits 2 for an unpinned rack, prints its fingerprint, never the key, and runs nothing there', async () => {
    const before = ssh.commands.length;
    const { code, stdout, stderr } = await cli('site-u', '--json');
    expect(code).toBe(2);
    const report = JSON.parse(stdout);
    expect(report.findings[0]).toMatchObject({ code: 'PROBE_FAILED' });
    expect(report.findings[0].evidence.reason).toContain(ssh.hostKeyFingerprint);
    expect(stdout + stderr).not.toContain('PRIVATE KEY');
    expect(ssh.commands.length).toBe(before);
  });

  it('gives an array for all, one report per site, and the worst exit status', async () => {
    const { code, stdout } = await cli('all', '--json');
    expect(code).toBe(2);
    expect(JSON.parse(stdout).map((r: { target: string; status: string }) => [r.target, r.status])).toEqual([
      ['site-a', 'ok'],
      ['site-b', 'critical'],
      ['site-u', 'error'],
    ]);
  });

  it('exits 64 for an unknown site, naming the known ones', async () => {
    const { code, stderr } = await cli('site-x');
    expect(code).toBe(64);
    expect(stderr).toContain('no site "site-x"');
    expect(stderr).toContain('site-a, site-b, site-u');
  });
});
