import { createHash } from 'node:crypto';
import type { CapmaasWatch, CapmaasWatchOptions, WatchedResource } from '../../adapters/kube/capmaas-watch.ts';
import type { WatchHealth } from '../../adapters/kube/resource-watch.ts';
import type { ClusterConfig, Config } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { ControllerLine } from '../../features/dns/controller-version.ts';
import { clusterWatchView, healFollowUp, watchTriggers, type ClusterWatchView, type WatchTrigger } from '../../features/dns/watch-triggers.ts';

/** One cluster's watch health, as /readyz shows it. */
export interface ClusterWatchHealth {
  cluster: string;
  /** Both informers are open and heard from recently. */
  healthy: boolean;
  resources?: Record<WatchedResource, WatchHealth>;
  /** Why the watch could not start (a kubeconfig that does not load). */
  error?: string;
}

export interface ClusterWatchOptions {
  config: Config;
  /** Builds the informers of one cluster (src/adapters/kube/capmaas-watch.ts in production). */
  watchCapmaas: (cluster: ClusterConfig, options: CapmaasWatchOptions) => CapmaasWatch;
  /**
   * Queues the cluster's dns-check as a scan. `key` is the same in every process that saw the
   * same change, so several workers watching one cluster queue one scan.
   */
  scan: (target: string, triggers: WatchTrigger[], key: string) => Promise<void>;
  /**
   * The controller's release line (from its Deployment's image), read when the watch starts and
   * again after each scan it asks for; null when unknown. Without it the reasons name no line.
   */
  controllerLine?: (cluster: ClusterConfig) => Promise<ControllerLine | null>;
  /** After a control plane runs again on a controller without the hash cache, one more scan this much later; default 20 s. */
  healGraceMs?: number;
  /** Changes this close together make one scan; default 500 ms. */
  debounceMs?: number;
  informer?: Omit<CapmaasWatchOptions, 'onChange' | 'onRestart' | 'onError'>;
  onRestart?: CapmaasWatchOptions['onRestart'];
  log: Logger;
}

export interface ClusterWatches {
  health(): ClusterWatchHealth[];
  close(): Promise<void>;
}

/**
 * Watches the MaasCluster and control-plane MaasMachines of every configured cluster and runs
 * its dns-check as soon as the hash annotation changes or the last control-plane machine stops
 * (src/features/dns/watch-triggers.ts). The scheduled scans stay: this only makes them early.
 */
export function startClusterWatches(options: ClusterWatchOptions): ClusterWatches {
  const watchers = Object.values(options.config.clusters).map((cluster) => watchOne(cluster, options));
  return {
    health: () => watchers.map((w) => w.health()),
    close: async () => {
      await Promise.all(watchers.map((w) => w.close()));
    },
  };
}

interface OneWatch {
  health(): ClusterWatchHealth;
  close(): Promise<void>;
}

function watchOne(cluster: ClusterConfig, options: ClusterWatchOptions): OneWatch {
  const log = options.log.child({ component: 'cluster-watch', cluster: cluster.name });
  const debounceMs = options.debounceMs ?? 500;
  let last: ClusterWatchView | undefined;
  const pending: WatchTrigger[] = [];
  let timer: NodeJS.Timeout | undefined;
  const followUps = new Set<NodeJS.Timeout>();
  const healGraceMs = options.healGraceMs ?? 20_000;
  let looking = false;
  let closed = false;
  let watch: CapmaasWatch;
  let line: ControllerLine | null = null;
  const learnLine = () => {
    options.controllerLine?.(cluster).then(
      (l) => {
        line = l;
      },
      (err: unknown) => log.debug({ err: describeError(err) }, 'could not read the controller image; trigger reasons name no release line'),
    );
  };

  const look = () => {
    if (looking || closed) return;
    looking = true;
    // Events of one list or one burst arrive in one tick: look once they are all in the cache.
    setImmediate(() => {
      looking = false;
      evaluate();
    });
  };

  const evaluate = () => {
    if (closed || !watch.synced()) return;
    const view = clusterWatchView(cluster.maasCluster, watch.maasClusters(), watch.maasMachines());
    const triggers = watchTriggers(last, view, line);
    last = view;
    if (!triggers.length) return;
    log.info({ triggers: triggers.map((t) => t.kind) }, 'management cluster changed: dns-check runs now');
    pending.push(...triggers);
    timer ??= setTimeout(fire, debounceMs);
  };

  const fire = () => {
    timer = undefined;
    const triggers = dedupe(pending.splice(0));
    const key = changeKey(cluster.name, watch);
    queue(triggers, key);
    const followUp = last ? healFollowUp(triggers, last, line, healGraceMs) : null;
    if (followUp) {
      const t = setTimeout(() => {
        followUps.delete(t);
        if (!closed) queue([followUp], `${key}-heal`);
      }, healGraceMs);
      followUps.add(t);
    }
    // An upgrade changes what the next change means.
    learnLine();
  };

  const queue = (triggers: WatchTrigger[], key: string) => {
    options.scan(cluster.name, triggers, key).catch((err: unknown) => {
      log.warn({ err: describeError(err) }, 'could not queue the dns-check the watch asked for; the scheduled scan still runs');
    });
  };

  try {
    watch = options.watchCapmaas(cluster, {
      ...options.informer,
      onChange: look,
      onRestart: (resource, reason) => {
        if (reason !== 'relist') log.info({ resource, reason }, 'watch restarted');
        options.onRestart?.(resource, reason);
      },
      onError: (resource, err) => log.warn({ resource, err: describeError(err) }, 'watch failed; retrying with backoff'),
    });
  } catch (err) {
    const error = describeError(err);
    log.warn({ err: error }, 'cannot watch this cluster: only the scheduled scans check it');
    return { health: () => ({ cluster: cluster.name, healthy: false, error }), close: async () => undefined };
  }
  watch.start();
  learnLine();
  return {
    health: () => {
      const resources = watch.health();
      return { cluster: cluster.name, healthy: Object.values(resources).every((h) => h.healthy), resources };
    },
    close: async () => {
      closed = true;
      clearTimeout(timer);
      for (const t of followUps) clearTimeout(t);
      await watch.stop();
    },
  };
}

function dedupe(triggers: WatchTrigger[]): WatchTrigger[] {
  const seen = new Set<string>();
  return triggers.filter((t) => !seen.has(t.text) && seen.add(t.text));
}

/** The resourceVersions the decision was made from: equal in every process that saw this change. */
function changeKey(cluster: string, watch: CapmaasWatch): string {
  const versions = [...watch.maasClusters(), ...watch.maasMachines()]
    .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion ?? ''}`)
    .sort();
  return createHash('sha256').update(cluster).update('\0').update(versions.join(',')).digest('hex').slice(0, 24);
}
