import type { Adapters } from './adapters.ts';
import type { ClusterConfig, Config } from '../core/config.ts';
import { ChatopsError } from '../core/errors.ts';
import { watchCapmaas } from './kube/capmaas-watch.ts';
import { createKubeClient } from './kube/client.ts';
import { createMaasClient, type MaasRequestInfo } from './maas/client.ts';
import type { PeerOutcome } from '../core/peer-outcome.ts';
import type { KubeClient } from './kube/types.ts';
import type { MaasClient } from './maas/types.ts';
import { createSshConnector } from './ssh/connector.ts';

/** The production adapters: one MAAS client per region and one kube client per cluster, reused. */
export interface RealAdapterOptions {
  onMaasRequest?: (info: MaasRequestInfo) => void;
  /** MAAS_MAX_BODY_MIB in bytes; default the client's 64 MiB. */
  maasMaxBodyBytes?: number;
  /** Every SSH connection and command, every Kubernetes API request: for the peer metrics. */
  onPeerRequest?: (peer: 'ssh' | 'kube', outcome: PeerOutcome, ms: number) => void;
}

export function createRealAdapters(config: Config, options: RealAdapterOptions = {}): Adapters {
  const maasClients = new Map<string, MaasClient>();
  const kubeClients = new Map<string, KubeClient>();
  const onPeer = options.onPeerRequest;
  return {
    maas(region: string): MaasClient {
      let client = maasClients.get(region);
      if (!client) {
        const regionConfig = config.maas[region];
        if (!regionConfig) throw new ChatopsError('CONFIG_INVALID', `no MAAS region "${region}"`);
        client = createMaasClient(regionConfig, {
          ...(options.onMaasRequest ? { onRequest: options.onMaasRequest } : {}),
          ...(options.maasMaxBodyBytes ? { maxBodyBytes: options.maasMaxBodyBytes } : {}),
        });
        maasClients.set(region, client);
      }
      return client;
    },
    kube(cluster: ClusterConfig): KubeClient {
      let client = kubeClients.get(cluster.name);
      if (!client) {
        client = createKubeClient(cluster, onPeer ? { onRequest: (outcome, ms) => onPeer('kube', outcome, ms) } : {});
        kubeClients.set(cluster.name, client);
      }
      return client;
    },
    ssh: createSshConnector(onPeer ? { onRequest: (outcome, ms) => onPeer('ssh', outcome, ms) } : {}),
    watchCapmaas,
  };
}
