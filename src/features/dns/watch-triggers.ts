import { CLUSTER_NAME_LABEL } from '../../adapters/kube/capmaas.ts';
import type { MaasClusterObject, MaasMachineObject } from '../../adapters/kube/types.ts';
import type { ControllerLine } from './controller-version.ts';
import { EMPTY_SET_HASH } from './dns-hash.ts';
import { isControlPlane, isRunning } from './desired-set.ts';
import { lastAppliedHash } from './evaluate.ts';
import { capiClusterName } from './gather.ts';

/**
 * What the management-cluster watch looks at for one configured cluster, and which changes make
 * its dns-check run at once. The three controller lines (docs/findings.md) leave different traces:
 *  - before v4.8.0 (v0.x upstream, v1.x, v4.0–v4.7) there is no hash annotation; the controller
 *    PUTs the running set every reconcile, so the record empties when the last control-plane
 *    machine stops and fills again when one runs: the machine triggers are what show it;
 *  - v4.8.0–v4.9.1 cache the hash without the empty-set guard: the wipe shows as the annotation
 *    turning into the empty-set hash, and it sticks;
 *  - v4.9.2+ keep the records while a control-plane machine exists: the annotation does not move
 *    when the last one stops, the records go stale instead, so the machine triggers matter here too.
 */

export interface ClusterWatchView {
  /** The MaasCluster exists. */
  present: boolean;
  /** The last-applied-dns-hash annotation; null when absent. */
  hash: string | null;
  /** Control-plane machines (not being deleted) that are powered and Deploying/Deployed, by name. */
  running: string[];
  /** Control-plane machines not being deleted. */
  existing: number;
}

export type WatchTriggerKind = 'hash-emptied' | 'hash-changed' | 'last-cp-stopped' | 'cp-running-again' | 'maascluster-gone' | 'maascluster-back' | 'heal-follow-up';

export interface WatchTrigger {
  kind: WatchTriggerKind;
  /** One line for the log and the scan's record of why it ran. */
  text: string;
}

export function clusterWatchView(name: string, clusters: readonly MaasClusterObject[], machines: readonly MaasMachineObject[]): ClusterWatchView {
  const cluster = clusters.find((c) => c.metadata.name === name);
  if (!cluster) return { present: false, hash: null, running: [], existing: 0 };
  const capi = capiClusterName(cluster);
  const controlPlane = machines.filter((m) => isControlPlane(m) && m.metadata.labels?.[CLUSTER_NAME_LABEL] === capi && !m.metadata.deletionTimestamp);
  return {
    present: true,
    hash: lastAppliedHash(cluster),
    running: controlPlane.filter(isRunning).map((m) => m.metadata.name).sort(),
    existing: controlPlane.length,
  };
}

/**
 * The changes between two views that call for a dns-check now; none for the first view. `line`
 * (from the controller Deployment's image; null when unknown) says what each change does to the
 * record, so the reason logged and kept with the scan is true for this controller.
 */
export function watchTriggers(before: ClusterWatchView | undefined, after: ClusterWatchView, line: ControllerLine | null = null): WatchTrigger[] {
  if (!before) return [];
  if (before.present && !after.present) return [{ kind: 'maascluster-gone', text: 'the MaasCluster is gone' }];
  if (!before.present && after.present) return [{ kind: 'maascluster-back', text: 'the MaasCluster appeared' }];
  const triggers: WatchTrigger[] = [];
  if (after.hash !== before.hash) {
    triggers.push(
      after.hash === EMPTY_SET_HASH
        ? { kind: 'hash-emptied', text: `last-applied-dns-hash became the empty-set hash: ${HASH_EMPTIED[line ?? 'unknown']}` }
        : { kind: 'hash-changed', text: `last-applied-dns-hash changed (${short(before.hash)} → ${short(after.hash)}): the controller applied another IP set` },
    );
  }
  if (before.running.length > 0 && after.running.length === 0) {
    triggers.push({ kind: 'last-cp-stopped', text: `the last running control-plane machine stopped (${before.running.join(', ')})${LAST_CP_STOPPED[line ?? 'unknown']}` });
  } else if (before.running.length === 0 && after.running.length > 0) {
    triggers.push({ kind: 'cp-running-again', text: `a control-plane machine runs again (${after.running.join(', ')})${CP_RUNNING_AGAIN[line ?? 'unknown']}` });
  }
  return triggers;
}

function short(hash: string | null): string {
  return hash === null ? 'none' : hash.slice(0, 12);
}

type LineOrUnknown = ControllerLine | 'unknown';

const HASH_EMPTIED: Record<LineOrUnknown, string> = {
  'unguarded-hash-cache': 'the controller applied an empty IP set and cached it (the PCP-6608 wipe; this release has no empty-set guard)',
  'guarded-hash-cache': 'the controller cleared the record, which this release does only when no control-plane machine exists',
  'no-hash-cache': 'this controller release keeps no hash cache, so something else wrote it',
  unknown: 'the controller applied an empty IP set (the PCP-6608 wipe)',
};

const LAST_CP_STOPPED: Record<LineOrUnknown, string> = {
  'unguarded-hash-cache': ': this release PUTs the empty set and caches it, so the record is wiped for good',
  'guarded-hash-cache': ': this release keeps the records, which now point at a stopped machine',
  'no-hash-cache': ': this release empties the record until one runs again, then fills it (no hash cache)',
  unknown: '',
};

const CP_RUNNING_AGAIN: Record<LineOrUnknown, string> = {
  'unguarded-hash-cache': ': its IP hashes differently from the cached set, so the controller re-applies it if it can reconcile',
  'guarded-hash-cache': ': the controller writes its IP over the kept records',
  'no-hash-cache': ': the controller fills the record on this reconcile',
  unknown: '',
};

/**
 * A control plane running again heals the record on the controller's next reconcile, which may
 * come after the scan the change queued. With a hash cache the heal moves the annotation (another
 * trigger); without one (no annotation at all) nothing the watch sees changes, so it asks for one
 * more dns-check after a grace period to see the heal and resolve the alert.
 */
export function healFollowUp(triggers: readonly WatchTrigger[], view: ClusterWatchView, line: ControllerLine | null, graceMs: number): WatchTrigger | null {
  if (!triggers.some((t) => t.kind === 'cp-running-again')) return null;
  if (line !== 'no-hash-cache' && view.hash !== null) return null;
  return { kind: 'heal-follow-up', text: `${Math.round(graceMs / 1000)} s after a control-plane machine ran again: the controller keeps no hash cache, so only a check shows whether it filled the record` };
}
