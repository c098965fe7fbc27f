import { Counter, Gauge, type Registry } from 'prom-client';
import { boundedLabel, METRIC_PREFIX } from './metrics.ts';

/*
 * The management-cluster watch's health. Labels are the watched resource and the restart reason,
 * both fixed sets; a cluster name never becomes a label (/readyz names the cluster).
 */

const RESOURCES = ['maasclusters', 'maasmachines'] as const;
const REASONS = ['error', 'silent', 'gone', 'relist'] as const;

/** One informer as the gauges see it. */
export interface WatchSample {
  resource: string;
  healthy: boolean;
  /** Seconds since its last event, bookmark or list; null before the first. */
  heardAgeSeconds: number | null;
}

export interface WatchMetrics {
  recordRestart(resource: string, reason: string): void;
}

export function registerWatchMetrics(registry: Registry, samples: () => readonly WatchSample[]): WatchMetrics {
  const registers = [registry];
  const restarts = new Counter({
    name: `${METRIC_PREFIX}kube_watch_restarts_total`,
    help: 'Management-cluster watches re-opened, by resource and reason (error: after a backoff; silent: nothing heard, not even a bookmark; gone: 410, listed again; relist: the schedule)',
    labelNames: ['resource', 'reason'] as const,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}kube_watches`,
    help: 'Management-cluster watches by resource and health (healthy: open and heard from recently)',
    labelNames: ['resource', 'health'] as const,
    registers,
    collect() {
      this.reset();
      for (const resource of RESOURCES) for (const health of ['healthy', 'unhealthy']) this.set({ resource, health }, 0);
      for (const s of samples()) this.inc({ resource: boundedLabel(RESOURCES, s.resource), health: s.healthy ? 'healthy' : 'unhealthy' });
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}kube_watch_heard_age_seconds`,
    help: 'The longest time any management-cluster watch of a resource has gone without an event, bookmark or list',
    labelNames: ['resource'] as const,
    registers,
    collect() {
      this.reset();
      const oldest = new Map<string, number>();
      for (const s of samples()) {
        if (s.heardAgeSeconds === null) continue;
        const resource = boundedLabel(RESOURCES, s.resource);
        oldest.set(resource, Math.max(oldest.get(resource) ?? 0, s.heardAgeSeconds));
      }
      for (const [resource, age] of oldest) this.set({ resource }, age);
    },
  });
  return {
    recordRestart: (resource, reason) => restarts.inc({ resource: boundedLabel(RESOURCES, resource), reason: boundedLabel(REASONS, reason) }),
  };
}
