import { Counter, Gauge, type Registry } from 'prom-client';
import { boundedLabel, METRIC_PREFIX } from './metrics.ts';

/*
 * The VM host watch's health. Labels are fixed sets (state, restart reason, lifecycle event);
 * a site or host name never becomes a label (/readyz names them).
 */

const STATES = ['connecting', 'watching', 'backing-off', 'stopped'] as const;
const REASONS = ['dropped', 'exited', 'error'] as const;
const EVENTS = ['Defined', 'Undefined', 'Started', 'Suspended', 'Resumed', 'Stopped', 'Shutdown', 'PMSuspended', 'Crashed'] as const;

export interface VmHostWatchMetrics {
  recordRestart(reason: string): void;
  recordEvent(event: string): void;
}

export function registerVmHostWatchMetrics(registry: Registry, states: () => readonly string[]): VmHostWatchMetrics {
  const registers = [registry];
  const restarts = new Counter({
    name: `${METRIC_PREFIX}vmhost_watch_restarts_total`,
    help: 'VM host watches re-opened, by reason (dropped: the SSH connection closed under virsh event; exited: virsh event ended; error: no session could be opened)',
    labelNames: ['reason'] as const,
    registers,
  });
  const events = new Counter({
    name: `${METRIC_PREFIX}vmhost_watch_events_total`,
    help: 'libvirt lifecycle events the VM host watches read, by event (Defined and Undefined queue a mac-diff)',
    labelNames: ['event'] as const,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}vmhost_watches`,
    help: 'VM host watches by state (watching: virsh event runs over an open session; stopped: not retried, see /readyz)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      this.reset();
      for (const state of STATES) this.set({ state }, 0);
      for (const state of states()) this.inc({ state: boundedLabel(STATES, state) });
    },
  });
  return {
    recordRestart: (reason) => restarts.inc({ reason: boundedLabel(REASONS, reason) }),
    recordEvent: (event) => events.inc({ event: boundedLabel(EVENTS, event) }),
  };
}
