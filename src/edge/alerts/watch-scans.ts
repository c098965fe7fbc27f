import type { Registry } from 'prom-client';
import type { Adapters } from '../../adapters/adapters.ts';
import type { ClusterConfig, Config, WatchConfig } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { QueuedData } from '../../engine/job-types.ts';
import type { EnqueueOptions } from '../../engine/queue/job-queues.ts';
import { registerWatchMetrics } from '../../engine/watch-metrics.ts';
import { controllerReleaseOf, type ControllerLine } from '../../features/dns/controller-version.ts';
import { SCAN_JOB } from '../../features/registry.ts';
import { startClusterWatches, type ClusterWatches } from './cluster-watch.ts';

export const DEFAULT_WATCH: WatchConfig = { clusters: true, debounceMs: 500, silentAfterMs: 150_000, relistEveryMs: 15 * 60_000 };

export interface WatchScansOptions {
  config: Config;
  adapters: Adapters;
  enqueue: (name: string, data: QueuedData, options: EnqueueOptions) => Promise<string>;
  registry: Registry;
  log: Logger;
  now?: () => number;
}

/**
 * The management-cluster watch of a worker process: its triggers queue the cluster's dns-check
 * as a scan (so the result opens, updates or resolves the alert as a scheduled scan's would).
 * Off with `watch: { clusters: false }`, with no cluster configured, or with adapters that
 * cannot watch.
 */
export function startWatchScans(options: WatchScansOptions): ClusterWatches | undefined {
  const settings = options.config.watch ?? DEFAULT_WATCH;
  const { watchCapmaas } = options.adapters;
  if (!settings.clusters || !watchCapmaas || Object.keys(options.config.clusters).length === 0) return undefined;
  const now = options.now ?? Date.now;
  const watches = startClusterWatches({
    config: options.config,
    watchCapmaas: (cluster, o) => watchCapmaas.call(options.adapters, cluster, o),
    log: options.log,
    debounceMs: settings.debounceMs,
    controllerLine: controllerLineReader(options.adapters),
    informer: { silentAfterMs: settings.silentAfterMs, relistEveryMs: settings.relistEveryMs },
    // Restarts come later, from the informers' callbacks: metrics exists by then.
    onRestart: (resource, reason) => metrics.recordRestart(resource, reason),
    scan: async (target, triggers, key) => {
      // The same change seen by several workers has one job id: BullMQ adds it once.
      await options.enqueue(SCAN_JOB, { check: 'dns-check', target, trigger: triggers.map((t) => t.text) }, { jobId: `watch-${key}`, attempts: 1 });
    },
  });
  const metrics = registerWatchMetrics(options.registry, () =>
    watches.health().flatMap((c) =>
      Object.entries(c.resources ?? {}).map(([resource, h]) => ({ resource, healthy: h.healthy, heardAgeSeconds: h.lastHeardAt === null ? null : (now() - h.lastHeardAt) / 1000 })),
    ),
  );
  return watches;
}

/** The release line of a cluster's controller, from its Deployment's image (the same read dns-check makes). */
export function controllerLineReader(adapters: Adapters): (cluster: ClusterConfig) => Promise<ControllerLine | null> {
  return async (cluster) => {
    const image = await adapters.kube(cluster).getDeploymentImage(cluster.controller.namespace, cluster.controller.deployment);
    return image ? (controllerReleaseOf(image)?.line ?? null) : null;
  };
}

/** /readyz's detail: each cluster's watch, without deciding readiness (the scheduled scans still run). */
export function watchDetail(watches: ClusterWatches | undefined, now: () => number = Date.now): Record<string, unknown> | undefined {
  if (!watches) return undefined;
  return {
    watches: watches.health().map((c) => ({
      cluster: c.cluster,
      healthy: c.healthy,
      ...(c.error ? { error: c.error } : {}),
      ...Object.fromEntries(
        Object.entries(c.resources ?? {}).map(([resource, h]) => [
          resource,
          {
            state: h.state,
            healthy: h.healthy,
            heardSecondsAgo: h.lastHeardAt === null ? null : Math.round((now() - h.lastHeardAt) / 1000),
            restarts: h.restarts,
            ...(h.lastError ? { lastError: h.lastError } : {}),
          },
        ]),
      ),
    })),
  };
}
