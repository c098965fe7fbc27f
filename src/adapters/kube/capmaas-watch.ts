import { CustomObjectsApi, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { ClusterConfig } from '../../core/config.ts';
import { CAPMAAS_GROUP, CAPMAAS_VERSION, CONTROL_PLANE_LABEL, MAAS_CLUSTER_PLURAL, MAAS_MACHINE_PLURAL } from './capmaas.ts';
import { timeoutOptions } from './client.ts';
import { loadKubeConfig } from './kubeconfig.ts';
import { ResourceWatch, type ResourceWatchOptions, type WatchHealth } from './resource-watch.ts';
import type { MaasClusterObject, MaasMachineObject } from './types.ts';

const LIST_TIMEOUT_MS = 30_000;

export type WatchedResource = typeof MAAS_CLUSTER_PLURAL | typeof MAAS_MACHINE_PLURAL;

/** The two informers behind one configured cluster's watch, in its namespace. */
export interface CapmaasWatch {
  /** Both informers have listed: what they hold is a whole picture. */
  synced(): boolean;
  maasClusters(): MaasClusterObject[];
  maasMachines(): MaasMachineObject[];
  start(): void;
  stop(): Promise<void>;
  health(): Record<WatchedResource, WatchHealth>;
}

export type CapmaasWatchOptions = Omit<ResourceWatchOptions<never>, 'kubeConfig' | 'path' | 'list' | 'labelSelector' | 'onRestart' | 'onError'> & {
  onRestart?: (resource: WatchedResource, reason: Parameters<NonNullable<ResourceWatchOptions<never>['onRestart']>>[0]) => void;
  onError?: (resource: WatchedResource, err: unknown) => void;
};

/**
 * MaasClusters of the namespace, and its control-plane MaasMachines (label
 * cluster.x-k8s.io/control-plane): the Role needs get, list and watch on both, nothing more.
 */
export function watchCapmaas(cluster: ClusterConfig, options: CapmaasWatchOptions): CapmaasWatch {
  const kubeConfig = loadKubeConfig(cluster);
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = cluster.kube.namespace;
  const path = (plural: WatchedResource) => `/apis/${CAPMAAS_GROUP}/${CAPMAAS_VERSION}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
  const make = (plural: WatchedResource, labelSelector?: string) =>
    new ResourceWatch({
      ...options,
      kubeConfig,
      path: path(plural),
      ...(labelSelector ? { labelSelector } : {}),
      list: () =>
        api.listNamespacedCustomObject(
          { group: CAPMAAS_GROUP, version: CAPMAAS_VERSION, namespace, plural, ...(labelSelector ? { labelSelector } : {}) },
          timeoutOptions(LIST_TIMEOUT_MS),
        ) as Promise<KubernetesListObject<KubernetesObject>>,
      onRestart: (reason) => options.onRestart?.(plural, reason),
      onError: (err) => options.onError?.(plural, err),
    });
  const maasClusters = make(MAAS_CLUSTER_PLURAL);
  const maasMachines = make(MAAS_MACHINE_PLURAL, CONTROL_PLANE_LABEL);
  return {
    synced: () => maasClusters.synced && maasMachines.synced,
    // The API server's JSON, of which these types name the fields the checks read.
    maasClusters: () => maasClusters.objects() as unknown as MaasClusterObject[],
    maasMachines: () => maasMachines.objects() as unknown as MaasMachineObject[],
    start: () => {
      maasClusters.start();
      maasMachines.start();
    },
    stop: async () => {
      await Promise.all([maasClusters.stop(), maasMachines.stop()]);
    },
    health: () => ({ [MAAS_CLUSTER_PLURAL]: maasClusters.health(), [MAAS_MACHINE_PLURAL]: maasMachines.health() }) as Record<WatchedResource, WatchHealth>,
  };
}
