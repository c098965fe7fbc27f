import { afterEach, describe, expect, it } from 'vitest';
import { watchCapmaas } from '../../src/adapters/kube/capmaas-watch.ts';
import { MAAS_CLUSTER_PLURAL, MAAS_MACHINE_PLURAL } from '../../src/adapters/kube/capmaas.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startClusterWatches, type ClusterWatches } from '../../src/edge/alerts/cluster-watch.ts';
import { controllerLineReader } from '../../src/edge/alerts/watch-scans.ts';
import { createRealAdapters } from '../../src/adapters/real-adapters.ts';
import { dnsHash, EMPTY_SET_HASH } from '../../src/features/dns/dns-hash.ts';
import type { WatchTrigger } from '../../src/features/dns/watch-triggers.ts';
import { controllerDeployment, kubeconfigFor, maasClusterObject, maasMachineObject, startKubeSimulator, type KubeSimulator } from '../../lab/kube-sim/index.ts';
import { waitUntil } from '../helpers/redis.ts';

// Real parts: client-node's informer (ListWatch and Watch over undici) against the Kubernetes API
// simulator, which serves list and chunked watch streams with bookmarks, 410 Gone and silence.
// The scan the watch asks for is recorded, not run: what it runs is the scheduled scan's job.

const CP_IP = '10.11.135.36';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Scan {
  target: string;
  codes: string[];
  key: string;
}

const texts = new WeakMap<Scan, string[]>();

interface World {
  sim: KubeSimulator;
  watches: ClusterWatches;
  scans: Scan[];
  delays: number[];
  requests(verb: 'list' | 'watch', plural: string): number;
}

function cluster(hash: string | null = dnsHash([CP_IP])) {
  return maasClusterObject({ name: 'prod', fqdn: 'prod-k8s.maas.example', ...(hash ? { lastAppliedHash: hash } : {}) });
}

function cp(name: string, powered = true, ip = CP_IP) {
  return maasMachineObject({ name, cluster: 'prod', controlPlane: true, systemId: `s-${name}`, externalIps: [ip], powered });
}

async function world(options: { silentAfterMs?: number; relistEveryMs?: number; bookmarkMs?: number; debounceMs?: number; controllerImage?: string; hash?: string | null; healGraceMs?: number } = {}): Promise<World> {
  const sim = await startKubeSimulator({
    state: {
      maasClusters: [cluster(options.hash === undefined ? dnsHash([CP_IP]) : options.hash)],
      maasMachines: [cp('prod-cp-0'), maasMachineObject({ name: 'prod-w-0', cluster: 'prod', systemId: 'w0', externalIps: ['10.11.135.41'] })],
      ...(options.controllerImage ? { deployments: [controllerDeployment(options.controllerImage)] } : {}),
    },
  });
  sim.watches.bookmarkIntervalMs = options.bookmarkMs ?? 60_000;
  cleanups.push(() => sim.close());
  const { config } = parseConfigText('maas: { r: { url: http://127.0.0.1:9/MAAS, apiKey: env:K } }\nclusters:\n  prod: { maas: r, kube: { kubeconfig: env:KC } }\n', {
    path: 't.yaml',
    env: { K: 'a:b:c', KC: kubeconfigFor(sim) },
  });
  const scans: Scan[] = [];
  const delays: number[] = [];
  const watches = startClusterWatches({
    config,
    watchCapmaas,
    log: silentLogger(),
    debounceMs: options.debounceMs ?? 100,
    ...(options.healGraceMs !== undefined ? { healGraceMs: options.healGraceMs } : {}),
    informer: {
      silentAfterMs: options.silentAfterMs ?? 60_000,
      ...(options.relistEveryMs ? { relistEveryMs: options.relistEveryMs } : {}),
      backoff: { baseMs: 40, maxMs: 400 },
      random: () => 0.5,
      sleep: async (ms) => {
        delays.push(ms);
        await new Promise((r) => setTimeout(r, 5));
      },
    },
    ...(options.controllerImage ? { controllerLine: controllerLineReader(createRealAdapters(config)) } : {}),
    scan: async (target: string, triggers: WatchTrigger[], key: string) => {
      const scan = { target, codes: triggers.map((t) => t.kind), key };
      texts.set(scan, triggers.map((t) => t.text));
      scans.push(scan);
    },
  });
  cleanups.push(() => watches.close());
  const requests = (verb: 'list' | 'watch', plural: string) =>
    sim.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/${plural}`) && (verb === 'watch') === (c.query.watch === 'true')).length;
  const w = { sim, watches, scans, delays, requests };
  await waitUntil(() => sim.watches.openCount === 2);
  return w;
}

const healthOf = (w: World) => w.watches.health()[0];

describe('watching the management cluster (real informer, simulated API server)', () => {
  it('runs the dns-check once when the hash annotation turns into the empty-set hash, and not at the first list', async () => {
    const w = await world();
    expect(w.scans).toEqual([]);
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans).toEqual([{ target: 'prod', codes: ['hash-emptied'], key: expect.any(String) }]);
    // Both informers listed once and watched once: the change came over the open watch.
    expect([w.requests('list', MAAS_CLUSTER_PLURAL), w.requests('watch', MAAS_CLUSTER_PLURAL)]).toEqual([1, 1]);
    // The watch asked for bookmarks and a server-side timeout, and only for control-plane machines.
    const machineWatch = w.sim.calls.find((c) => c.path.endsWith(`/${MAAS_MACHINE_PLURAL}`) && c.query.watch === 'true');
    expect(machineWatch?.query).toMatchObject({ allowWatchBookmarks: 'true', labelSelector: 'cluster.x-k8s.io/control-plane', timeoutSeconds: '300' });
  });

  it.each([
    { image: 'v0.6.1', stopped: /this release empties the record until one runs again, then fills it \(no hash cache\)$/ },
    { image: 'v0.6.1-spectro-4.9.1', stopped: /this release PUTs the empty set and caches it, so the record is wiped for good$/ },
    { image: 'v0.6.1-spectro-4.9.2', stopped: /this release keeps the records, which now point at a stopped machine$/ },
  ])('says what the last control plane stopping does to the record for the controller it reads ($image)', async ({ image, stopped }) => {
    const w = await world({ controllerImage: `gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:${image}` });
    // The line is read from the controller Deployment once the watch starts.
    await waitUntil(() => w.sim.calls.some((c) => c.path.endsWith('/deployments/capmaas-controller-manager')));
    await new Promise((r) => setTimeout(r, 100));
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', false));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['last-cp-stopped']]);
    expect(texts.get(w.scans[0]!)).toEqual([expect.stringMatching(stopped)]);
  });

  it('without a hash cache, a control plane running again is checked once more after the grace period, to see the heal', async () => {
    const w = await world({ hash: null, healGraceMs: 300 });
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', false));
    await waitUntil(() => w.scans.length === 1);
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', true));
    await waitUntil(() => w.scans.length === 3);
    expect(w.scans.map((s) => s.codes)).toEqual([['last-cp-stopped'], ['cp-running-again'], ['heal-follow-up']]);
    expect(w.scans[2]?.key).toBe(`${w.scans[1]?.key}-heal`);
  });

  it('with a hash cache the heal moves the annotation, so no follow-up is queued', async () => {
    const w = await world({ healGraceMs: 100 });
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', false));
    await waitUntil(() => w.scans.length === 1);
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', true));
    await waitUntil(() => w.scans.length === 2);
    // Two grace periods and more: still no third scan.
    await new Promise((r) => setTimeout(r, 400));
    expect(w.scans.map((s) => s.codes)).toEqual([['last-cp-stopped'], ['cp-running-again']]);
  });

  it('debounces a burst into one scan carrying every reason: the last control plane stopping, then the hash emptied', async () => {
    const w = await world({ debounceMs: 300 });
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', false));
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    await new Promise((r) => setTimeout(r, 400));
    expect(w.scans).toHaveLength(1);
    expect(w.scans[0]?.codes.sort()).toEqual(['hash-emptied', 'last-cp-stopped']);
  });

  it('ignores changes that leave the hash and the running control plane as they were (a worker, a status touch)', async () => {
    const w = await world();
    w.sim.apply(MAAS_MACHINE_PLURAL, { ...cp('prod-cp-0'), metadata: { ...cp('prod-cp-0').metadata, annotations: { touched: 'yes' } } });
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster());
    // A later change that does matter proves the earlier ones were seen and passed over.
    w.sim.apply(MAAS_MACHINE_PLURAL, cp('prod-cp-0', false));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['last-cp-stopped']]);
  });

  it('after 410 Gone it lists again and still sees the change made while it was away', async () => {
    const w = await world();
    // The watch ends; before the informer comes back the change happens and the history is compacted.
    w.sim.watches.closeAll();
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    w.sim.watches.compact();
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    expect(w.requests('list', MAAS_CLUSTER_PLURAL)).toBe(2);
    expect(healthOf(w)?.resources?.maasclusters.restarts.gone).toBe(1);
  });

  it('answers an HTTP 410 Gone on the watch request by listing again, without a backoff, and goes on watching', async () => {
    const w = await world();
    w.sim.failWatches(1, 410, MAAS_CLUSTER_PLURAL);
    w.sim.watches.closeAll();
    await waitUntil(() => w.sim.watches.openCount === 2);
    // Watching again: the change comes over the new watch.
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    // The first list, the 410 answer's list; the first watch, the refused one, the one now open.
    expect([w.requests('list', MAAS_CLUSTER_PLURAL), w.requests('watch', MAAS_CLUSTER_PLURAL)]).toEqual([2, 3]);
    expect(w.delays).toEqual([]);
    expect(healthOf(w)?.resources?.maasclusters).toMatchObject({ state: 'watching', healthy: true, restarts: { gone: 1, error: 0 } });
  });

  it('parses an event split across two chunks once: one scan, no reconnect', async () => {
    const w = await world();
    w.sim.watches.splitEvents = true;
    const sentBefore = w.sim.watches.eventsSent;
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    // A touch that changes nothing the watch looks at, split too: later events still arrive whole.
    const touched = cluster(EMPTY_SET_HASH);
    touched.metadata.annotations = { ...touched.metadata.annotations, touched: 'yes' };
    w.sim.apply(MAAS_CLUSTER_PLURAL, touched);
    await waitUntil(() => w.watches.health()[0]?.resources?.maasclusters.lastHeardAt !== null && w.sim.watches.eventsSent - sentBefore === 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    expect(w.requests('watch', MAAS_CLUSTER_PLURAL)).toBe(1);
    expect(healthOf(w)?.resources?.maasclusters.restarts).toEqual({ error: 0, silent: 0, gone: 0, relist: 0 });
  });

  it('lists again on its schedule, and so catches a change a dead watch never delivered', async () => {
    // The watch goes quiet without being noticed (silentAfter far off): only the re-list can see the change.
    const w = await world({ relistEveryMs: 300, silentAfterMs: 60_000 });
    w.sim.watches.silenceOpen();
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    const clusters = healthOf(w)?.resources?.maasclusters;
    expect(clusters?.restarts).toMatchObject({ relist: expect.any(Number), silent: 0, error: 0 });
    expect(clusters?.restarts.relist).toBeGreaterThanOrEqual(1);
    expect(w.requests('list', MAAS_CLUSTER_PLURAL)).toBeGreaterThanOrEqual(2);
  });

  it('drops a watch that went silent and catches up from where it was', async () => {
    const w = await world({ silentAfterMs: 400, bookmarkMs: 60_000 });
    w.sim.watches.silenceOpen();
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    const clusters = healthOf(w)?.resources?.maasclusters;
    expect(clusters?.restarts.silent).toBeGreaterThanOrEqual(1);
    // Caught up by resuming the watch from its resourceVersion, not by listing again.
    expect(w.requests('list', MAAS_CLUSTER_PLURAL)).toBe(1);
  });

  it('keeps a quiet watch that sends bookmarks: no restart, healthy', async () => {
    const w = await world({ silentAfterMs: 400, bookmarkMs: 100 });
    const bookmarksSeen = () => (healthOf(w)?.resources?.maasclusters.lastHeardAt ?? 0);
    const first = bookmarksSeen();
    await waitUntil(() => bookmarksSeen() > first + 900, 5_000);
    expect(w.requests('watch', MAAS_CLUSTER_PLURAL)).toBe(1);
    expect(healthOf(w)).toMatchObject({ healthy: true, resources: { maasclusters: { state: 'watching', restarts: { silent: 0, error: 0 } } } });
  });

  it('backs off after errors (doubling, capped) instead of hammering the API server, and recovers', async () => {
    const w = await world();
    w.sim.failWatches(5, 500, MAAS_CLUSTER_PLURAL);
    w.sim.watches.closeAll();
    await waitUntil(() => w.sim.watches.openCount === 2);
    // One backoff per failed watch; each informer restart lists once more.
    expect(w.delays).toEqual([30, 60, 120, 240, 300]);
    expect(w.requests('watch', MAAS_CLUSTER_PLURAL) + w.requests('watch', MAAS_MACHINE_PLURAL)).toBe(2 + 2 + 5);
    w.sim.apply(MAAS_CLUSTER_PLURAL, cluster(EMPTY_SET_HASH));
    await waitUntil(() => w.scans.length > 0);
    expect(w.scans.map((s) => s.codes)).toEqual([['hash-emptied']]);
    const restarts = Object.values(healthOf(w)?.resources ?? {}).reduce((n, h) => n + h.restarts.error, 0);
    expect(restarts).toBe(5);
  });

  it('says why it cannot watch (RBAC) and keeps trying, slower each time', async () => {
    const w = await world();
    w.sim.forbid({ verb: 'watch', resource: MAAS_MACHINE_PLURAL });
    w.sim.watches.closeAll();
    await waitUntil(() => w.delays.length >= 3);
    const machines = healthOf(w)?.resources?.maasmachines;
    expect(machines?.healthy).toBe(false);
    expect(machines?.lastError).toMatch(/Forbidden/);
    expect(w.delays.slice(0, 3)).toEqual([30, 60, 120]);
  });
});
