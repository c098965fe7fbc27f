import type { ClusterConfig, Config } from '../core/config.ts';
import type { CapmaasWatch, CapmaasWatchOptions } from './kube/capmaas-watch.ts';
import type { KubeClient } from './kube/types.ts';
import type { MaasClient } from './maas/types.ts';
import type { SshConnector } from './ssh/types.ts';

/** Everything a job may talk to. Built once per process; tests and the lab inject their own. */
export interface Adapters {
  maas(region: string): MaasClient;
  kube(cluster: ClusterConfig): KubeClient;
  ssh: SshConnector;
  /** The management-cluster informers; absent (tests' own adapters) = no watch, the scheduled scans only. */
  watchCapmaas?(cluster: ClusterConfig, options: CapmaasWatchOptions): CapmaasWatch;
}

export type AdapterFactory = (config: Config) => Adapters;
