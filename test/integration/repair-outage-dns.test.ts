import { afterEach, describe, expect, it } from 'vitest';
import { fixDnsJob } from '../../jobs/fix-dns.ts';
import { fixDnsRepair } from '../../src/features/dns/repair.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator } from '../../lab/maas-sim/index.ts';
import { startOutageRig } from '../../lab/repair-outage.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { OUTAGE_LOCK, OUTAGE_MS, countBy, waitFor } from '../helpers/outage.ts';

// fix-dns under a Redis outage longer than the jobs' lock, struck right after the DNS record PUT
// reached a slow MAAS (1.5 s per request): the PUT and the kube patch each reach their server
// once, and the repair finishes after Redis returns. Real parts: redis-server (AOF), BullMQ, the
// MAAS and Kubernetes API simulators over HTTP.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('fix-dns: Redis away past the lock mid-repair', () => {
  it('the record PUT and the hash patch are each sent once; the repair finishes after Redis returns', async () => {
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
    const { config } = parseConfigText(yaml, { path: 'test.yaml', env: { MAAS_KEY: apiKey, PROD_KUBECONFIG: kubeconfigFor(kube) } });
    const adapters: Adapters = {
      maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 10_000 }),
      kube: (cluster) => createKubeClient(cluster),
      ssh: { connect: () => Promise.reject(new Error('fix-dns must not use SSH')) },
    };
    const rig = await startOutageRig({ jobs: [fixDnsJob], context: { config, adapters }, lock: OUTAGE_LOCK });
    cleanups.push(() => rig.close());
    const plan = await fixDnsRepair.plan({ config, adapters, log: silentLogger() }, 'prod');
    expect(plan.steps.map((s) => s.action)).toEqual(['set-dns-ips', 'set-dns-hash']);

    maas.setLatency(1_500);
    maas.resetCalls();
    await rig.approveAndQueue(plan);
    await waitFor(() => maas.calls.some((c) => c.method === 'PUT'), 60_000, 'the DNS PUT reaching MAAS');
    await rig.killRedis();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await rig.restartRedis();

    const stored = await rig.finished(plan.id, 90_000);
    expect(stored.results?.map((r) => `${r.action} ${r.outcome}`)).toEqual(['set-dns-ips verified', 'set-dns-hash verified']);
    expect(countBy(maas.calls.filter((c) => c.method !== 'GET'), (c) => `${c.method} ${c.path}`)).toEqual({ 'PUT /MAAS/api/2.0/dnsresources/41/': 1 });
    expect(countBy(kube.calls.filter((c) => c.method !== 'GET'), (c) => `${c.method} ${c.path}`)).toEqual({
      'PATCH /apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/maasclusters/prod': 1,
    });
    expect(maas.state.dnsresources.find((r) => r.id === 41)?.ip_addresses).toEqual(['10.11.135.36']);

    await waitFor(() => rig.said.summaries.length > 0, 10_000, 'the summary');
    expect(rig.said.thread.filter((t) => t.startsWith('Resuming after a restart'))).toHaveLength(1);
    expect(rig.said.thread.filter((t) => t.startsWith('prod'))).toHaveLength(1);
    expect(rig.said.summaries).toHaveLength(1);
    expect(rig.said.errors).toEqual([]);
  }, 150_000);
});
