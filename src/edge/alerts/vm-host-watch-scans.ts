import type { Registry } from 'prom-client';
import type { Adapters } from '../../adapters/adapters.ts';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { QueuedData } from '../../engine/job-types.ts';
import type { EnqueueOptions } from '../../engine/queue/job-queues.ts';
import { registerVmHostWatchMetrics } from '../../engine/vm-host-watch-metrics.ts';
import { watchedVmHosts } from '../../features/macs/watched-vm-hosts.ts';
import { SCAN_JOB } from '../../features/registry.ts';
import { startVmHostWatches, type VmHostWatches, type VmHostWatchTuning } from './vm-host-watch.ts';

export interface VmHostWatchScansOptions {
  config: Config;
  adapters: Adapters;
  enqueue: (name: string, data: QueuedData, options: EnqueueOptions) => Promise<string>;
  registry: Registry;
  log: Logger;
  tuning?: VmHostWatchTuning;
}

/**
 * The VM host watch of a worker process: a domain defined or undefined queues the site's mac-diff
 * as a scan, so its result opens, updates or resolves the alert as a scheduled scan's would.
 * Off unless some site sets `watch: { vmHosts: true }`.
 */
export function startVmHostWatchScans(options: VmHostWatchScansOptions): VmHostWatches | undefined {
  if (!Object.values(options.config.sites).some((s) => s.watchVmHosts)) return undefined;
  const { adapters } = options;
  const watches = startVmHostWatches({
    ...options.tuning,
    ...(options.config.watch ? { debounceMs: options.config.watch.debounceMs, rediscoverEveryMs: options.config.watch.relistEveryMs } : {}),
    config: options.config,
    connect: (target) => adapters.ssh.connect(target),
    discover: (site) => watchedVmHosts(adapters.maas(site.maas), site),
    log: options.log,
    // Restarts and events come later, from the sessions: metrics exists by then.
    onRestart: (reason) => metrics.recordRestart(reason),
    onEvent: (event) => metrics.recordEvent(event),
    // Workers that saw the same change (the same events, the same MACs after them) fire within
    // moments of each other: while the first one's mac-diff is queued or running, the others join
    // it. Once it is done the key is free, so a change back and forth is diffed again (a late
    // worker's copy then runs after it, behind the scan lock, and finds the same).
    scan: async (site, triggers, key) => {
      await options.enqueue(SCAN_JOB, { check: 'mac-diff', target: site, trigger: triggers }, { attempts: 1, oncePer: { id: `vmhost-watch-${key}` } });
    },
  });
  const metrics = registerVmHostWatchMetrics(options.registry, () => watches.health().map((h) => h.state));
  return watches;
}

/** /readyz's detail: each VM host's watch, without deciding readiness (the scheduled scans still run). */
export function vmHostWatchDetail(watches: VmHostWatches | undefined): Record<string, unknown> | undefined {
  if (!watches) return undefined;
  const errors = watches.discoveryErrors();
  return {
    vmHostWatches: watches.health().map((h) => ({
      site: h.site,
      vmHost: h.vmHost,
      state: h.state,
      healthy: h.healthy,
      sessions: h.sessions,
      restarts: h.restarts,
      events: h.events,
      ...(h.lastError ? { lastError: h.lastError } : {}),
      ...(h.stoppedReason ? { stoppedReason: h.stoppedReason } : {}),
    })),
    ...(errors.length ? { vmHostDiscovery: errors } : {}),
  };
}
