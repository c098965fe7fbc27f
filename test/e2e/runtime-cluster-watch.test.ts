import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { MAAS_CLUSTER_PLURAL } from '../../src/adapters/kube/capmaas.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator, type KubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator } from '../../lab/maas-sim/index.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// The worker role as deployed, with the management-cluster watch on (the default): its health is
// on /readyz's detail, per cluster and watched resource, and on /metrics, restarts counted by reason.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function worker(): Promise<{ runtime: Runtime; kube: KubeSimulator; url: string }> {
  const lab = dnsLabScenario();
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  cleanups.push(() => maas.close());
  const kube = await startKubeSimulator({ state: structuredClone(lab.clusters.find((c) => c.name === 'prod')?.kube) });
  cleanups.push(() => kube.close());
  const env = { MAAS_KEY: apiKey, KC: kubeconfigFor(kube) };
  const yaml = `
maas: { region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY } }
clusters:
  prod: { maas: region-a, kube: { kubeconfig: env:KC } }
`;
  const loaded = { ...parseConfigText(yaml, { path: 'watch.yaml', env }), secrets: [apiKey], warnings: [] };
  const prefix = freshPrefix('cluster-watch-runtime');
  const runtime = await startRuntime({ role: 'worker', loaded, env: { ...env, REDIS_URL: TEST_REDIS_URL, PORT: '0' }, prefix, host: '127.0.0.1', log: silentLogger() });
  cleanups.push(async () => {
    await runtime.close();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });
  return { runtime, kube, url: `http://127.0.0.1:${runtime.port}` };
}

interface ResourceDetail {
  state: string;
  healthy: boolean;
  restarts: Record<string, number>;
}

describe('worker role with the management-cluster watch', () => {
  it('shows each watch on /readyz and /metrics, and counts a 410 restart on both', async () => {
    const { kube, url } = await worker();
    await waitUntil(() => kube.watches.openCount === 2, 20_000);
    const detail = async () => ((await (await fetch(`${url}/readyz`)).json()) as { detail: { watches: Record<string, ResourceDetail | string | boolean>[] } }).detail;
    await waitUntil(async () => (await detail()).watches[0]?.healthy === true, 20_000);
    const quiet = { error: 0, silent: 0, gone: 0, relist: 0 };
    expect((await detail()).watches).toEqual([
      {
        cluster: 'prod',
        healthy: true,
        maasclusters: { state: 'watching', healthy: true, heardSecondsAgo: expect.any(Number), restarts: quiet },
        maasmachines: { state: 'watching', healthy: true, heardSecondsAgo: expect.any(Number), restarts: quiet },
      },
    ]);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('maas_chatops_kube_watches{resource="maasclusters",health="healthy"} 1');
    expect(metrics).toContain('maas_chatops_kube_watches{resource="maasmachines",health="healthy"} 1');
    expect(metrics).toContain('maas_chatops_kube_watches{resource="maasclusters",health="unhealthy"} 0');

    // The API server answers the next MaasCluster watch with 410 Gone: listed again, counted once.
    kube.failWatches(1, 410, MAAS_CLUSTER_PLURAL);
    kube.watches.closeAll();
    await waitUntil(async () => ((await detail()).watches[0]?.maasclusters as ResourceDetail).restarts.gone === 1, 20_000);
    await waitUntil(() => kube.watches.openCount === 2, 20_000);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('maas_chatops_kube_watch_restarts_total{resource="maasclusters",reason="gone"} 1');
    expect(((await detail()).watches[0]?.maasmachines as ResourceDetail).restarts).toEqual(quiet);
  }, 60_000);
});
