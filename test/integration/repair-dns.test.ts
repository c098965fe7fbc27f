import { checkJob } from '../../jobs/check-job.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dnsCheck } from '../../src/features/dns/index.ts';
import { fixDnsJob } from '../../jobs/fix-dns.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { dnsHash, EMPTY_SET_HASH } from '../../src/features/dns/evaluate.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator, type KubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { main } from '../../src/cli.ts';
import { exitCodeFor, type Report } from '../../src/core/report.ts';

const dnsCheckJob = checkJob(dnsCheck);

// Real parts: the MAAS simulator (dnsresources as MAAS serves them) and a Kubernetes API simulator
// for prod's management cluster, reached by the real MAAS and kube clients over loopback.

const HASH_KEY = 'infrastructure.cluster.x-k8s.io/last-applied-dns-hash';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Lab {
  maas: MaasSimulator;
  kube: KubeSimulator;
  ctx: JobContext;
  yaml: string;
  env: Record<string, string>;
}

async function startLab(): Promise<Lab> {
  const lab = dnsLabScenario();
  const prod = lab.clusters.find((c) => c.name === 'prod');
  if (!prod) throw new Error('no prod in the DNS lab');
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  cleanups.push(() => maas.close());
  const kube = await startKubeSimulator({ state: structuredClone(prod.kube) });
  cleanups.push(() => kube.close());
  const yaml = `
maas:
  region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY }
clusters:
  prod: { maas: region-a, kube: { kubeconfig: env:PROD_KUBECONFIG } }
`;
  const env = { MAAS_KEY: apiKey, PROD_KUBECONFIG: kubeconfigFor(kube) };
  const { config } = parseConfigText(yaml, { path: 'test.yaml', env });
  const adapters: Adapters = {
    maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
    kube: (cluster) => createKubeClient(cluster),
    ssh: { connect: () => Promise.reject(new Error('fix-dns must not use SSH')) },
  };
  return { maas, kube, ctx: { config, adapters, log: silentLogger() }, yaml, env };
}

const writes = (lab: Lab) => [
  ...lab.maas.calls.filter((c) => c.method !== 'GET').map((c) => `MAAS ${c.method} ${c.path} ${JSON.stringify(c.form)}`),
  ...lab.kube.calls.filter((c) => c.method !== 'GET').map((c) => `kube ${c.method} ${c.path} ${JSON.stringify(c.body)}`),
];
const annotation = (lab: Lab) => lab.kube.state.maasClusters[0]?.metadata.annotations?.[HASH_KEY];

describe('fix-dns against the MAAS and Kubernetes simulators', () => {
  it('plans the wiped prod record without writing: exit status 1', async () => {
    const lab = await startLab();
    const reports = await fixDnsJob.run(lab.ctx, { target: 'prod', interactive: true, apply: false });
    expect(reports[0]?.plan?.steps.map((s) => s.action)).toEqual(['set-dns-ips', 'set-dns-hash']);
    expect(writes(lab)).toEqual([]);
    expect(exitCodeFor(reports)).toBe(1);
  });

  it('--apply: PUT the desired set, then the hash annotation; both read back; dns-check healthy after', async () => {
    const lab = await startLab();
    const reports = await fixDnsJob.run(lab.ctx, { target: 'prod', interactive: true, apply: true, requestedBy: 'terminal:ops' });
    const [report] = reports as [Report];
    expect(report.results?.map((r) => [r.action, r.outcome])).toEqual([
      ['set-dns-ips', 'verified'],
      ['set-dns-hash', 'verified'],
    ]);
    expect(exitCodeFor(reports)).toBe(0);
    const hash = dnsHash(['10.11.135.36']);
    expect(writes(lab)).toEqual([
      'MAAS PUT /MAAS/api/2.0/dnsresources/41/ {"ip_addresses":["10.11.135.36"]}',
      `kube PATCH /apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasclusters/prod {"metadata":{"annotations":{"${HASH_KEY}":"${hash}"}}}`,
    ]);
    // Each write is followed by a read of what it changed.
    const maasPut = lab.maas.calls.findIndex((c) => c.method === 'PUT');
    expect(lab.maas.calls.slice(maasPut + 1).some((c) => c.method === 'GET' && c.path === '/MAAS/api/2.0/dnsresources/41/')).toBe(true);
    const patch = lab.kube.calls.findIndex((c) => c.method === 'PATCH');
    expect(lab.kube.calls.slice(patch + 1).some((c) => c.method === 'GET' && c.path.endsWith('/maasclusters/prod'))).toBe(true);
    expect(lab.maas.state.dnsresources.find((r) => r.id === 41)?.ip_addresses).toEqual(['10.11.135.36']);
    expect(annotation(lab)).toBe(hash);

    const [check] = await dnsCheckJob.run(lab.ctx, { target: 'prod' });
    expect(check?.findings.map((f) => f.code)).toEqual(['DNS_CONTROLLER_VULNERABLE']);
  });

  it('--apply: a hash patch whose answer is lost is read back, found applied and verified, and not sent again', async () => {
    const lab = await startLab();
    lab.kube.dropPatchAnswers(1);
    const reports = await fixDnsJob.run(lab.ctx, { target: 'prod', interactive: true, apply: true, requestedBy: 'terminal:ops' });
    const hashStep = reports[0]?.results?.find((r) => r.action === 'set-dns-hash');
    expect(hashStep?.outcome).toBe('verified');
    expect(hashStep?.detail).toMatch(/took effect, though its answer was lost .*not sent again/);
    expect(lab.kube.calls.filter((c) => c.method === 'PATCH')).toHaveLength(1);
    expect(annotation(lab)).toBe(dnsHash(['10.11.135.36']));
    expect(exitCodeFor(reports)).toBe(0);
  });

  it('refuses an empty desired set in the planner: nothing is planned, nothing written', async () => {
    const lab = await startLab();
    const cp = lab.kube.state.maasMachines.find((m) => m.metadata.name === 'prod-cp-0');
    if (cp?.status) cp.status.machinePowered = false;
    const reports = await fixDnsJob.run(lab.ctx, { target: 'prod', interactive: true, apply: true });
    expect(reports[0]?.plan?.steps).toEqual([]);
    expect(reports[0]?.verdict).toMatch(/^Refused for prod: .*an empty set is never written/);
    expect(writes(lab)).toEqual([]);
    expect(annotation(lab)).toBe(EMPTY_SET_HASH);
    expect(exitCodeFor(reports)).toBe(2);
  });

  it('refuses an empty set in the MAAS client too, whoever calls it: no PUT leaves', async () => {
    const lab = await startLab();
    const maas = lab.ctx.adapters.maas('region-a');
    await expect(maas.updateDnsResourceIps(41, [])).rejects.toMatchObject({ code: 'GUARD_REFUSED' });
    await expect(maas.updateDnsResourceIps(41, ['', ' '])).rejects.toThrow(/refused to set DNS resource 41 to no addresses/);
    expect(lab.maas.calls).toEqual([]);
  });

  it('refuses when MAAS holds two records for the FQDN', async () => {
    const lab = await startLab();
    lab.maas.state.dnsresources.push({ id: 77, fqdn: 'prod-k8s.maas.example', address_ttl: null, ip_addresses: ['10.11.135.99'] });
    const reports = await fixDnsJob.run(lab.ctx, { target: 'prod', interactive: true, apply: true });
    expect(reports[0]?.plan?.steps).toEqual([]);
    expect(reports[0]?.verdict).toMatch(/will not pick one/);
    expect(writes(lab)).toEqual([]);
  });

  it('through the CLI: the plan exits 1 and writes nothing; --apply exits 0 with every step verified', async () => {
    const lab = await startLab();
    const dir = mkdtempSync(join(tmpdir(), 'fix-dns-cli-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, lab.yaml);
    const out: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: () => undefined };
    const env = { ...lab.env, USER: 'ops', LOG_LEVEL: 'silent' };
    expect(await main(['fix-dns', 'prod', '--config', file, '--json'], io, env)).toBe(1);
    expect(writes(lab)).toEqual([]);
    expect(JSON.parse(out[0] ?? '{}')).toMatchObject({ kind: 'fix-dns', target: 'prod', plan: { steps: [{ action: 'set-dns-ips' }, { action: 'set-dns-hash' }] } });
    expect(await main(['fix-dns', 'prod', '--config', file, '--json', '--apply'], io, env)).toBe(0);
    const applied = JSON.parse(out[1] ?? '{}') as Report;
    expect(applied.results?.map((r) => r.outcome)).toEqual(['verified', 'verified']);
    expect(applied.verdict).toBe('fix-dns prod done: 2 of 2 steps verified (applied by terminal:ops)');
    expect(writes(lab)).toHaveLength(2);
    expect(out.join('\n')).not.toContain(lab.env.MAAS_KEY);
  });

  it('takes one cluster, not all', async () => {
    const lab = await startLab();
    await expect(fixDnsJob.run(lab.ctx, { target: 'all', interactive: true })).rejects.toThrow(/takes one cluster, not all/);
  });
});
