import type { ClusterConfig, Config } from '../core/config.ts';
import type { KubeClient } from './kube/types.ts';
import type { MaasClient } from './maas/types.ts';
import type { SshConnector } from './ssh/types.ts';

/** Everything a job may talk to. Built once per process; tests and the lab inject their own. */
export interface Adapters {
  maas(region: string): MaasClient;
  kube(cluster: ClusterConfig): KubeClient;
  ssh: SshConnector;
}

export type AdapterFactory = (config: Config) => Adapters;
