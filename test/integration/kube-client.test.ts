import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as yamlParse, stringify as yamlStringify } from 'yaml';
import type { ClusterConfig } from '../../src/core/config.ts';
import { ChatopsError } from '../../src/core/errors.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import type { KubeClient } from '../../src/adapters/kube/types.ts';
import {
  controllerDeployment,
  kubeconfigFor,
  maasClusterObject,
  maasMachineObject,
  preferredSubnetConfigMap,
  startKubeSimulator,
  type KubeSimulator,
} from '../../lab/kube-sim/index.ts';
import { Secret } from '../../src/core/secret.ts';

const IMAGE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v4.9.1-spectro';

function clusterConfig(kubeconfig: string, extra: Partial<ClusterConfig['kube']> = {}): ClusterConfig {
  return {
    name: 'prod',
    maas: 'region-a',
    kube: { kubeconfig: new Secret(kubeconfig, 'file:/secrets/mgmt.kubeconfig'), namespace: 'default', ...extra },
    maasCluster: 'prod',
    controller: { namespace: 'capmaas-system', deployment: 'capmaas-controller-manager' },
  };
}

async function kubeFailure(promise: Promise<unknown>): Promise<ChatopsError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChatopsError);
  expect((err as ChatopsError).code).toBe('KUBE_FAILED');
  return err as ChatopsError;
}

describe('createKubeClient against the kube simulator', () => {
  let sim: KubeSimulator;
  let kube: KubeClient;

  beforeEach(async () => {
    sim = await startKubeSimulator({
      state: {
        maasClusters: [maasClusterObject({ name: 'prod', fqdn: 'prod-k8s.maas.example', lastAppliedHash: 'abc', clusterName: 'prod-capi' })],
        maasMachines: [
          maasMachineObject({ name: 'prod-cp-0', cluster: 'prod-capi', controlPlane: true, systemId: 'k7dx3p', externalIps: ['10.11.135.36'] }),
          maasMachineObject({ name: 'prod-worker-0', cluster: 'prod-capi', systemId: 'm4q8rt', externalIps: ['10.11.135.41'] }),
          maasMachineObject({ name: 'other-cp-0', cluster: 'other', controlPlane: true, systemId: 'zz9zz9', externalIps: ['10.11.137.5'] }),
          maasMachineObject({ name: 'elsewhere-cp-0', namespace: 'team-b', cluster: 'prod-capi', controlPlane: true, systemId: 'yy8yy8' }),
        ],
        configMaps: [preferredSubnetConfigMap('default', ' 10.11.135.0/24 , 2001:db8::/64')],
        deployments: [controllerDeployment(IMAGE)],
      },
    });
    kube = createKubeClient(clusterConfig(kubeconfigFor(sim)));
  });

  afterEach(async () => {
    await sim.close();
  });

  it('reads a MaasCluster by the path client-node builds, with its annotations and status', async () => {
    const mc = await kube.getMaasCluster('default', 'prod');
    expect(mc?.metadata.annotations?.['infrastructure.cluster.x-k8s.io/last-applied-dns-hash']).toBe('abc');
    expect(mc?.status?.network?.dnsName).toBe('prod-k8s.maas.example');
    expect(mc?.spec?.controlPlaneEndpoint).toEqual({ host: 'prod-k8s.maas.example', port: 6443 });
    expect(sim.calls).toEqual([
      expect.objectContaining({ method: 'GET', path: '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasclusters/prod', status: 200 }),
    ]);
  });

  it('answers null for a MaasCluster that does not exist (404)', async () => {
    expect(await kube.getMaasCluster('default', 'nope')).toBeNull();
    expect(sim.calls.map((c) => c.status)).toEqual([404]);
  });

  it('lists only the cluster’s MaasMachines in the namespace, by label selector', async () => {
    const machines = await kube.listMaasMachines('default', 'prod-capi');
    expect(machines.map((m) => m.metadata.name).sort()).toEqual(['prod-cp-0', 'prod-worker-0']);
    expect(sim.calls[0]).toMatchObject({
      path: '/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasmachines',
      query: { labelSelector: 'cluster.x-k8s.io/cluster-name=prod-capi' },
    });
  });

  it('splits and trims the preferred subnets as the controller does; null without the ConfigMap', async () => {
    expect(await kube.getPreferredSubnets('default')).toEqual(['10.11.135.0/24', '2001:db8::/64']);
    expect(await kube.getPreferredSubnets('team-b')).toBeNull();
    sim.state.configMaps = [{ namespace: 'default', name: 'maas-preferred-subnet', data: {} }];
    expect(await kube.getPreferredSubnets('default')).toEqual(['']);
    expect(sim.calls.map((c) => c.path)).toEqual([
      '/api/v1/namespaces/default/configmaps/maas-preferred-subnet',
      '/api/v1/namespaces/team-b/configmaps/maas-preferred-subnet',
      '/api/v1/namespaces/default/configmaps/maas-preferred-subnet',
    ]);
  });

  it('reads the manager container image of the controller Deployment; null when absent', async () => {
    expect(await kube.getDeploymentImage('capmaas-system', 'capmaas-controller-manager')).toBe(IMAGE);
    expect(await kube.getDeploymentImage('capmaas-system', 'missing')).toBeNull();
    expect(sim.calls[0]?.path).toBe('/apis/apps/v1/namespaces/capmaas-system/deployments/capmaas-controller-manager');
  });

  it('sets the annotation with a JSON merge patch and keeps the others', async () => {
    await kube.setMaasClusterAnnotation('default', 'prod', 'infrastructure.cluster.x-k8s.io/last-applied-dns-hash', 'fae8e006');
    expect(sim.calls[0]).toMatchObject({
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'infrastructure.cluster.x-k8s.io/last-applied-dns-hash': 'fae8e006' } } },
      status: 200,
    });
    const mc = await kube.getMaasCluster('default', 'prod');
    expect(mc?.metadata.annotations?.['infrastructure.cluster.x-k8s.io/last-applied-dns-hash']).toBe('fae8e006');
    expect(mc?.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('prod-capi');
  });

  it('turns a 403 into KUBE_FAILED naming the object and the RBAC verb to grant', async () => {
    sim.forbid({ verb: 'get', resource: 'maasclusters' });
    const err = await kubeFailure(kube.getMaasCluster('default', 'prod'));
    expect(err.message).toBe('Kubernetes forbids get on maasclusters.infrastructure.cluster.x-k8s.io "prod" in namespace default');
    expect(err.hint).toMatch(/RBAC verb "get" on "maasclusters" in API group "infrastructure.cluster.x-k8s.io", namespace default/);
    expect(err.describe()).not.toContain(sim.token);
  });

  it('names list for a forbidden MaasMachine list and the core group for a ConfigMap', async () => {
    sim.forbid({ verb: 'list', resource: 'maasmachines', namespace: 'default' });
    sim.forbid({ verb: 'get', resource: 'configmaps' });
    const list = await kubeFailure(kube.listMaasMachines('default', 'prod-capi'));
    expect(list.message).toContain('forbids list on maasmachines.infrastructure.cluster.x-k8s.io in namespace default');
    const cm = await kubeFailure(kube.getPreferredSubnets('default'));
    expect(cm.hint).toContain('"configmaps" in the core API group');
    sim.allowAll();
    expect(await kube.listMaasMachines('default', 'prod-capi')).toHaveLength(2);
  });

  it('does not read a 403 as "absent"', async () => {
    sim.forbid({ verb: 'get', resource: 'deployments' });
    await kubeFailure(kube.getDeploymentImage('capmaas-system', 'capmaas-controller-manager'));
  });

  it('reports rejected credentials (401) without echoing them', async () => {
    const wrong = createKubeClient(clusterConfig(kubeconfigFor(sim, { token: 'not-the-token-0123456789' })));
    const err = await kubeFailure(wrong.getMaasCluster('default', 'prod'));
    expect(err.message).toContain('rejected the bot\'s credentials (401)');
    expect(err.describe()).not.toContain('not-the-token-0123456789');
    expect(sim.calls.map((c) => c.status)).toEqual([401]);
  });

  it('reports an API server that does not answer in time', async () => {
    sim.latencyMs = 5_000;
    const slow = createKubeClient(clusterConfig(kubeconfigFor(sim)), { timeoutMs: 100 });
    const err = await kubeFailure(slow.getMaasCluster('default', 'prod'));
    expect(err.message).toBe(`cannot reach the Kubernetes API server at ${sim.url} (no answer in time)`);
  });

  it('reports every request to the peer metrics: ok, an expected 404 as ok, 401 as client_error, no answer as timeout', async () => {
    const seen: string[] = [];
    const onRequest = (outcome: string) => void seen.push(outcome);
    const good = createKubeClient(clusterConfig(kubeconfigFor(sim)), { onRequest });
    await good.getMaasCluster('default', 'prod');
    expect(await good.getMaasCluster('default', 'no-such-cluster')).toBeNull();
    await kubeFailure(createKubeClient(clusterConfig(kubeconfigFor(sim, { token: 'not-the-token-0123456789' })), { onRequest }).getMaasCluster('default', 'prod'));
    sim.latencyMs = 5_000;
    await kubeFailure(createKubeClient(clusterConfig(kubeconfigFor(sim)), { timeoutMs: 100, onRequest }).getMaasCluster('default', 'prod'));
    expect(seen).toEqual(['ok', 'ok', 'client_error', 'timeout']);
  });

  it('reports an API server that is not there', async () => {
    const text = kubeconfigFor(sim);
    await sim.close();
    const gone = createKubeClient(clusterConfig(text));
    const err = await kubeFailure(gone.getMaasCluster('default', 'prod'));
    expect(err.message).toMatch(/^cannot reach the Kubernetes API server at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
    sim = await startKubeSimulator(); // afterEach closes it
  });

  it('uses the configured context, and names the known ones when it is missing', async () => {
    const broken = kubeconfigFor({ url: 'http://127.0.0.1:9', token: 'x' }, { context: 'broken' });
    const good = kubeconfigFor(sim, { context: 'mgmt' });
    const merged = mergeKubeconfigs(broken, good, 'broken');
    const client = createKubeClient(clusterConfig(merged, { context: 'mgmt' }));
    expect((await client.getMaasCluster('default', 'prod'))?.metadata.name).toBe('prod');
    const err = await kubeFailure(createKubeClient(clusterConfig(merged, { context: 'nope' })).getMaasCluster('default', 'prod'));
    expect(err.message).toBe('clusters.prod.kube.context: no context "nope" in the kubeconfig');
    expect(err.hint).toBe('Known contexts: broken, mgmt');
  });

  it('refuses an unreadable kubeconfig without quoting it', async () => {
    const secretish = `apiVersion: v1\nusers: [ { name: a, user: { token: sekrit-${sim.token} } }\n`;
    const err = await kubeFailure(createKubeClient(clusterConfig(secretish)).getMaasCluster('default', 'prod'));
    expect(err.message).toMatch(/^cannot use the kubeconfig from clusters\.prod\.kube\.kubeconfig \(file:\/secrets\/mgmt\.kubeconfig\): not a valid kubeconfig/);
    expect(err.describe()).not.toContain(sim.token);
    expect(sim.calls).toHaveLength(0);
  });
});

/** Two single-context kubeconfigs as one, `current` selected. */
function mergeKubeconfigs(a: string, b: string, current: string): string {
  const parse = (text: string) => yamlParse(text) as Record<string, unknown[]>;
  const x = parse(a);
  const y = parse(b);
  return yamlStringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [...(x.clusters ?? []), ...(y.clusters ?? [])],
    users: [...(x.users ?? []), ...(y.users ?? [])],
    contexts: [...(x.contexts ?? []), ...(y.contexts ?? [])],
    'current-context': current,
  });
}
