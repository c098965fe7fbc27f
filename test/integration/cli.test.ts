import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.ts';
import { startLabWorld, type LabWorld } from '../../lab/lab-world.ts';

/** The terminal path: the same jobs inline, against the lab's simulators, with the documented exit statuses. */
describe('maas-chatops CLI', () => {
  let world: LabWorld;
  beforeAll(async () => {
    world = await startLabWorld();
  });
  afterAll(async () => {
    await world?.close();
  });

  async function run(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) }, { ...world.env, PATH: process.env.PATH });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('exits 1 with the verdict first when problems are found', async () => {
    const r = await run('dns-check', 'prod', '--config', world.configPath);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe('CRITICAL dns-check prod: API record WIPED, empty-set hash cached: the controller re-applies it only when it reconciles again, and has not');
  });

  it('exits 0 for a healthy target', async () => {
    const r = await run('mac-diff', 'site-a', '--config', world.configPath);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^OK mac-diff site-a/);
  });

  it('--json prints exactly one JSON document: a report, or an array for all', async () => {
    const one = await run('resolver-check', 'site-b', '--json', '--config', world.configPath);
    expect(one.code).toBe(1);
    const report = JSON.parse(one.out) as { findings: { code: string }[] };
    expect(report).toMatchObject({ kind: 'resolver-check', target: 'site-b', status: 'critical' });
    expect(report.findings.map((f) => f.code).sort()).toEqual(['RESOLVER_DHCP_RACK_FIRST', 'RESOLVER_DHCP_SERVERS', 'RESOLVER_SERVFAIL']);
    const all = await run('dns-check', 'all', '--json', '--config', world.configPath);
    const reports = JSON.parse(all.out) as { target: string; status: string }[];
    expect(reports.map((r) => [r.target, r.status])).toEqual([
      ['prod', 'critical'],
      ['staging', 'ok'],
    ]);
    expect(all.code).toBe(1);
  });

  it('exits 2 when a target could not be checked', async () => {
    await world.kube.staging?.close();
    const r = await run('dns-check', 'staging', '--json', '--config', world.configPath);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({ status: 'error', findings: [{ code: 'PROBE_FAILED' }] });
  });

  it('exits 64 for an unknown target, naming the known ones', async () => {
    const r = await run('mac-diff', 'site-x', '--config', world.configPath);
    expect(r.code).toBe(64);
    expect(r.err).toContain('no site "site-x". known sites: site-a, site-b');
  });

  it('exits 64 for a config error and a usage error', async () => {
    expect((await run('sites', '--config', '/nonexistent.yaml')).code).toBe(64);
    expect((await run('dns-check')).code).toBe(64);
    expect((await run('frobnicate')).code).toBe(64);
  });

  it('never prints a secret', async () => {
    const r = await run('mac-diff', 'all', '--json', '--config', world.configPath);
    for (const secret of [world.env.LAB_MAAS_KEY, world.env.LAB_SSH_KEY]) {
      for (const part of (secret ?? '').split(/[:\n]/).filter((p) => p.length > 8)) expect(r.out + r.err).not.toContain(part);
    }
  });
});
