import { checkJob } from '../../jobs/check-job.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { dnsCheck } from '../../src/features/dns/index.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { dnsHash, EMPTY_SET_HASH } from '../../src/features/dns/evaluate.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, maasMachineObject, startKubeSimulator, type KubeSimulator } from '../../lab/kube-sim/index.ts';
import { LAST_APPLIED_DNS_HASH_ANNOTATION, MAAS_CLUSTER_PLURAL, MAAS_MACHINE_PLURAL } from '../../src/adapters/kube/capmaas.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import type { Report } from '../../src/core/report.ts';

const dnsCheckJob = checkJob(dnsCheck);

// Real parts: the MAAS simulator (OAuth, dnsresources as MAAS serves them) and one Kubernetes API
// simulator per cluster, reached over loopback HTTP by the real MAAS and kube clients.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Lab {
  maas: MaasSimulator;
  kube: Record<'prod' | 'staging', KubeSimulator>;
  ctx: JobContext;
}

async function startLab(options: { maasUrl?: string; prodMaasCluster?: string } = {}): Promise<Lab> {
  const lab = dnsLabScenario();
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  cleanups.push(() => maas.close());
  const kube = {} as Lab['kube'];
  for (const cluster of lab.clusters) {
    const sim = await startKubeSimulator({ state: structuredClone(cluster.kube) });
    cleanups.push(() => sim.close());
    kube[cluster.name as 'prod' | 'staging'] = sim;
  }
  const yaml = `
maas:
  region-a: { url: ${options.maasUrl ?? maas.url}, apiKey: env:MAAS_KEY }
clusters:
  prod:
    maas: region-a
    kube: { kubeconfig: env:PROD_KUBECONFIG }
    maasCluster: ${options.prodMaasCluster ?? 'prod'}
  staging:
    maas: region-a
    kube: { kubeconfig: env:STAGING_KUBECONFIG, context: staging-mgmt }
`;
  const env = {
    MAAS_KEY: apiKey,
    PROD_KUBECONFIG: kubeconfigFor(kube.prod),
    STAGING_KUBECONFIG: kubeconfigFor(kube.staging, { context: 'staging-mgmt' }),
  };
  const { config } = parseConfigText(yaml, { path: 'test.yaml', env });
  return { maas, kube, ctx: { config, adapters: adaptersFor(config), log: silentLogger() } };
}

function adaptersFor(config: Config): Adapters {
  return {
    maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
    kube: (cluster) => createKubeClient(cluster),
    ssh: { connect: () => Promise.reject(new Error('dns-check must not use SSH')) },
  };
}

const codes = (r: Report | undefined) => (r?.findings ?? []).map((f) => f.code).sort();

describe('dns-check job against the MAAS and Kubernetes simulators', () => {
  it('finds the wiped prod record and its cached empty-set hash, reading only', async () => {
    const { ctx, maas, kube } = await startLab();
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(report).toMatchObject({ kind: 'dns-check', target: 'prod', status: 'critical' });
    expect(report?.verdict).toBe('API record WIPED, empty-set hash cached: the controller re-applies it only when it reconciles again, and has not');
    expect(codes(report)).toEqual(['DNS_CONTROLLER_VULNERABLE', 'DNS_EMPTY_HASH_CACHED', 'DNS_RECORD_EMPTY']);
    const empty = report?.findings.find((f) => f.code === 'DNS_RECORD_EMPTY');
    expect(empty?.evidence).toMatchObject({ fqdn: 'prod-k8s.maas.example', recorded: [], desired: ['10.11.135.36'] });
    expect(empty?.fix).toContain('`/maas fix-dns prod`');
    expect(empty?.fix).toContain('v4.9.2 or later');

    expect(maas.calls.map((c) => `${c.method} ${c.path} ${JSON.stringify(c.query)}`)).toEqual([
      'GET /MAAS/api/2.0/dnsresources/ {"fqdn":["prod-k8s.maas.example"]}',
    ]);
    expect(kube.prod.calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual([
      'GET /api/v1/namespaces/default/configmaps/maas-preferred-subnet',
      'GET /apis/apps/v1/namespaces/capmaas-system/deployments/capmaas-controller-manager',
      'GET /apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasclusters/prod',
      'GET /apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasmachines',
    ]);
    expect(kube.staging.calls).toHaveLength(0);
  });

  it('calls staging healthy, and checks every cluster for `all`', async () => {
    const { ctx } = await startLab();
    const reports = await dnsCheckJob.run(ctx, { target: 'all' });
    expect(reports.map((r) => [r.target, r.status])).toEqual([
      ['prod', 'critical'],
      ['staging', 'ok'],
    ]);
    expect(reports[1]?.findings).toEqual([]);
    expect(reports[1]?.verdict).toBe('API record healthy: staging-k8s.maas.example → 10.11.136.21, 10.11.136.22, 10.11.136.23');
  });

  it('sees the repair: once MAAS holds the IP and the hash matches, prod is healthy but for the controller', async () => {
    const { ctx, maas, kube } = await startLab();
    const record = maas.state.dnsresources.find((r) => r.id === 41);
    if (!record) throw new Error('no prod record in the MAAS scenario');
    record.ip_addresses = ['10.11.135.36'];
    const annotations = kube.prod.state.maasClusters[0]?.metadata.annotations ?? {};
    annotations['infrastructure.cluster.x-k8s.io/last-applied-dns-hash'] = dnsHash(['10.11.135.36']);
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(codes(report)).toEqual(['DNS_CONTROLLER_VULNERABLE']);
    expect(report?.status).toBe('warning');
  });

  it('reports MAAS unreachable as PROBE_FAILED, never healthy', async () => {
    const closed = await startMaasSimulator({ scenario: scenario(), apiKeys: [randomApiKey()] });
    const deadUrl = closed.url;
    await closed.close();
    const { ctx, kube } = await startLab({ maasUrl: deadUrl });
    const [report] = await dnsCheckJob.run(ctx, { target: 'staging' });
    expect(report?.status).toBe('error');
    expect(codes(report)).toEqual(['PROBE_FAILED']);
    expect(String(report?.findings[0]?.evidence.reason)).toMatch(/^MAAS DNS resource lookup for staging-k8s\.maas\.example failed: MAAS region-a at http:\/\/127\.0\.0\.1:\d+\/MAAS is unreachable/);
    expect(report?.verdict).toMatch(/^Could not check: /);
    expect(kube.staging.calls.length).toBeGreaterThan(0);
  });

  it('reports a Kubernetes 403 as PROBE_FAILED naming the RBAC verb, and asks MAAS nothing', async () => {
    const { ctx, maas, kube } = await startLab();
    kube.prod.forbid({ verb: 'get', resource: 'maasclusters' });
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(report?.status).toBe('error');
    expect(codes(report)).toEqual(['PROBE_FAILED']);
    const reason = String(report?.findings[0]?.evidence.reason);
    expect(reason).toContain('Kubernetes forbids get on maasclusters.infrastructure.cluster.x-k8s.io "prod" in namespace default');
    expect(reason).toContain('RBAC verb "get"');
    expect(reason).not.toContain(kube.prod.token);
    expect(maas.calls).toHaveLength(0);
  });

  it('keeps checking when only the controller Deployment is forbidden', async () => {
    const { ctx, kube } = await startLab();
    kube.prod.forbid({ verb: 'get', resource: 'deployments' });
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(codes(report)).toEqual(['DNS_EMPTY_HASH_CACHED', 'DNS_RECORD_EMPTY']);
    const cached = report?.findings.find((f) => f.code === 'DNS_EMPTY_HASH_CACHED');
    expect(String(cached?.evidence.controller)).toMatch(/^unknown \(Kubernetes forbids get on deployments\.apps/);
  });

  it('reports a missing MaasCluster as PROBE_FAILED', async () => {
    const { ctx, maas } = await startLab({ prodMaasCluster: 'prod-typo' });
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(report?.status).toBe('error');
    expect(report?.verdict).toBe('Could not check: no MaasCluster "prod-typo" in namespace "default"');
    expect(maas.calls).toHaveLength(0);
  });

  it('reports a record MAAS does not have, and a domain MAAS does not serve', async () => {
    const { ctx, maas, kube } = await startLab();
    maas.state.dnsresources = maas.state.dnsresources.filter((r) => r.id !== 42);
    maas.state.domains = ['maas', 'maas.example'];
    const [missing] = await dnsCheckJob.run(ctx, { target: 'staging' });
    expect(codes(missing)).toEqual(['DNS_RECORD_MISSING']);

    const mc = kube.staging.state.maasClusters[0];
    if (!mc?.status?.network) throw new Error('no staging MaasCluster');
    mc.status.network.dnsName = 'staging-k8s.elsewhere.example';
    const [noDomain] = await dnsCheckJob.run(ctx, { target: 'staging' });
    expect(codes(noDomain)).toEqual(['DNS_RECORD_MISSING']);
    expect(noDomain?.findings[0]?.evidence).toMatchObject({ fqdn: 'staging-k8s.elsewhere.example', domainUnknown: 'elsewhere.example' });
  });

  it('reports an unreadable kubeconfig as PROBE_FAILED without quoting it', async () => {
    const { ctx } = await startLab();
    const text = 'apiVersion: v1\nusers: [ { name: a, user: { token: hush-hush-0123456789 } }\n';
    const { config } = parseConfigText(
      `maas:\n  region-a: { url: ${ctx.config.maas['region-a']?.url}, apiKey: env:MAAS_KEY }\nclusters:\n  prod: { maas: region-a, kube: { kubeconfig: env:BAD } }\n`,
      { path: 'bad.yaml', env: { MAAS_KEY: randomApiKey(), BAD: text } },
    );
    const [report] = await dnsCheckJob.run({ ...ctx, config, adapters: adaptersFor(config) }, { target: 'prod' });
    expect(report?.status).toBe('error');
    expect(JSON.stringify(report)).not.toContain('hush-hush');
  });

  it('treats an empty-set hash with no control plane at all as expected', async () => {
    const { ctx, maas, kube } = await startLab();
    kube.prod.state.maasMachines = kube.prod.state.maasMachines.filter((m) => !('cluster.x-k8s.io/control-plane' in (m.metadata.labels ?? {})));
    expect(kube.prod.state.maasClusters[0]?.metadata.annotations?.['infrastructure.cluster.x-k8s.io/last-applied-dns-hash']).toBe(EMPTY_SET_HASH);
    const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(codes(report)).toEqual(['DNS_CONTROLLER_VULNERABLE', 'DNS_NO_CONTROL_PLANE']);
    expect(maas.calls).toHaveLength(1);
  });

  describe('the controller line, read from the controller Deployment the simulator serves', () => {
    const IMAGE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller';
    const runAs = (kube: KubeSimulator, tag: string) => {
      for (const c of kube.state.deployments[0]?.containers ?? []) if (c.name === 'manager') c.image = `${IMAGE}:${tag}`;
    };
    const prodMachine = (name: string, o: { powered?: boolean; deleting?: boolean; ip?: string } = {}) =>
      maasMachineObject({ name, namespace: 'default', cluster: 'prod', controlPlane: true, systemId: `s-${name}`, zone: 'site-a', externalIps: [o.ip ?? '10.11.135.36'], powered: o.powered ?? true, ...(o.deleting ? { deleting: true } : {}) });
    const setHash = (kube: KubeSimulator, hash: string | null) => {
      const mc = kube.state.maasClusters[0]!;
      const annotations = { ...mc.metadata.annotations };
      if (hash === null) delete annotations[LAST_APPLIED_DNS_HASH_ANNOTATION];
      else annotations[LAST_APPLIED_DNS_HASH_ANNOTATION] = hash;
      kube.apply(MAAS_CLUSTER_PLURAL, { ...mc, metadata: { ...mc.metadata, annotations } });
    };

    it('upstream v0.6.1 (no hash cache): an empty record while the control plane is off is expected and heals', async () => {
      const { ctx, kube } = await startLab();
      runAs(kube.prod, 'v0.6.1');
      setHash(kube.prod, null);
      kube.prod.apply(MAAS_MACHINE_PLURAL, prodMachine('prod-cp-0', { powered: false }));
      const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
      expect(report?.verdict).toBe('API record empty while no control-plane machine runs: expected with a controller that keeps no hash cache; it heals when one runs again');
      expect(codes(report)).toEqual(['DNS_CP_NOT_RUNNING', 'DNS_RECORD_EMPTY']);
      expect(report?.findings.find((f) => f.code === 'DNS_RECORD_EMPTY')?.severity).toBe('warning');
    });

    it('v4.9.2 (guarded): the records of a control-plane machine that left, kept while its replacement is off, are STALE', async () => {
      const { ctx, kube, maas } = await startLab();
      runAs(kube.prod, 'v4.9.2-spectro');
      setHash(kube.prod, dnsHash(['10.11.135.36']));
      const record = maas.state.dnsresources.find((r) => r.fqdn === 'prod-k8s.maas.example')!;
      record.ip_addresses = ['10.11.135.36'];
      kube.prod.apply(MAAS_MACHINE_PLURAL, prodMachine('prod-cp-0', { deleting: true }));
      kube.prod.apply(MAAS_MACHINE_PLURAL, prodMachine('prod-cp-1', { powered: false, ip: '10.11.135.37' }));
      const [report] = await dnsCheckJob.run(ctx, { target: 'prod' });
      expect(report?.status).toBe('critical');
      expect(report?.verdict).toBe('API record STALE: MAAS holds 10.11.135.36, the address of no control-plane machine still in the cluster; it stays until one runs');
      expect(report?.findings.find((f) => f.code === 'DNS_DRIFT')?.evidence).toMatchObject({ stale: ['10.11.135.36'], desired: [] });
    });
  });
});
