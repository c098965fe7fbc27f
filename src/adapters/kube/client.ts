import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  Observable,
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubeConfig,
  type RequestContext,
} from '@kubernetes/client-node';
import type { ClusterConfig } from '../../core/config.ts';
import {
  CAPMAAS_GROUP,
  CAPMAAS_VERSION,
  CLUSTER_NAME_LABEL,
  CONTROLLER_CONTAINER,
  MAAS_CLUSTER_PLURAL,
  MAAS_MACHINE_PLURAL,
  PREFERRED_SUBNET_CONFIGMAP,
  PREFERRED_SUBNET_KEY,
} from './capmaas.ts';
import { peerOutcomeOfError, peerOutcomeOfStatus, type PeerOutcome } from '../../core/peer-outcome.ts';
import { kubeError, statusOf, type KubeOperation } from './kube-errors.ts';
import { loadKubeConfig, type KubeConfigSources } from './kubeconfig.ts';
import type { KubeClient, MaasClusterObject, MaasMachineObject } from './types.ts';

export interface KubeClientOptions {
  /** Per-request timeout; the API server may hang, a check must not. */
  timeoutMs?: number;
  /** Where to look for a kubeconfig when the cluster config names none (tests). */
  sources?: KubeConfigSources;
  /** Called after every API request, for the peer metrics (an expected 404 counts as ok). */
  onRequest?: (outcome: PeerOutcome, ms: number) => void;
}

const DEFAULT_TIMEOUT_MS = 15_000;

interface Apis {
  custom: CustomObjectsApi;
  core: CoreV1Api;
  apps: AppsV1Api;
  server: string;
}

/**
 * The management-cluster reads (and the one annotation write) behind the DNS check.
 * The kubeconfig is loaded on first use, so a bad one surfaces as that call's KUBE_FAILED error.
 */
export function createKubeClient(cluster: ClusterConfig, options: KubeClientOptions = {}): KubeClient {
  let apis: Apis | null = null;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connect = (): Apis => (apis ??= makeApis(loadKubeConfig(cluster, options.sources)));

  /** One API request, reported to onRequest with its outcome. */
  async function measured<T>(a: Apis, run: (apis: Apis, opts: ConfigurationOptions) => Promise<T>, okOn404 = false): Promise<T> {
    const started = performance.now();
    try {
      const value = await run(a, timeoutOptions(timeoutMs));
      options.onRequest?.('ok', performance.now() - started);
      return value;
    } catch (err) {
      options.onRequest?.(kubeOutcome(err, okOn404), performance.now() - started);
      throw err;
    }
  }

  async function call<T>(op: Omit<KubeOperation, 'server'>, run: (apis: Apis, opts: ConfigurationOptions) => Promise<T>): Promise<T> {
    const a = connect();
    try {
      return await measured(a, run);
    } catch (err) {
      throw kubeError(err, { ...op, server: a.server });
    }
  }

  async function orNullOn404<T>(op: Omit<KubeOperation, 'server'>, run: (apis: Apis, opts: ConfigurationOptions) => Promise<T>): Promise<T | null> {
    const a = connect();
    try {
      return await measured(a, run, true);
    } catch (err) {
      if (statusOf(err) === 404) return null;
      throw kubeError(err, { ...op, server: a.server });
    }
  }

  return {
    getMaasCluster: (namespace, name) =>
      orNullOn404({ verb: 'get', resource: MAAS_CLUSTER_PLURAL, group: CAPMAAS_GROUP, namespace, name }, (a, opts) =>
        a.custom.getNamespacedCustomObject(
          { group: CAPMAAS_GROUP, version: CAPMAAS_VERSION, namespace, plural: MAAS_CLUSTER_PLURAL, name },
          opts,
        ) as Promise<MaasClusterObject>,
      ),

    listMaasMachines: async (namespace, clusterName) => {
      const list = (await call({ verb: 'list', resource: MAAS_MACHINE_PLURAL, group: CAPMAAS_GROUP, namespace }, (a, opts) =>
        a.custom.listNamespacedCustomObject(
          {
            group: CAPMAAS_GROUP,
            version: CAPMAAS_VERSION,
            namespace,
            plural: MAAS_MACHINE_PLURAL,
            labelSelector: `${CLUSTER_NAME_LABEL}=${clusterName}`,
          },
          opts,
        ),
      )) as { items?: MaasMachineObject[] };
      return list.items ?? [];
    },

    getPreferredSubnets: async (namespace) => {
      const configMap = await orNullOn404(
        { verb: 'get', resource: 'configmaps', group: '', namespace, name: PREFERRED_SUBNET_CONFIGMAP },
        (a, opts) => a.core.readNamespacedConfigMap({ namespace, name: PREFERRED_SUBNET_CONFIGMAP }, opts),
      );
      if (!configMap) return null;
      // As GetPreferredSubnets does: split on commas and trim, keeping empty entries (they match nothing).
      return (configMap.data?.[PREFERRED_SUBNET_KEY] ?? '').split(',').map((s) => s.trim());
    },

    getDeploymentImage: async (namespace, name) => {
      const deployment = await orNullOn404({ verb: 'get', resource: 'deployments', group: 'apps', namespace, name }, (a, opts) =>
        a.apps.readNamespacedDeployment({ namespace, name }, opts),
      );
      const containers = deployment?.spec?.template?.spec?.containers ?? [];
      const manager = containers.find((c) => c.name === CONTROLLER_CONTAINER) ?? containers[0];
      return manager?.image ?? null;
    },

    setMaasClusterAnnotation: async (namespace, name, key, value) => {
      await call({ verb: 'patch', resource: MAAS_CLUSTER_PLURAL, group: CAPMAAS_GROUP, namespace, name }, (a, opts) =>
        a.custom.patchNamespacedCustomObject(
          {
            group: CAPMAAS_GROUP,
            version: CAPMAAS_VERSION,
            namespace,
            plural: MAAS_CLUSTER_PLURAL,
            name,
            body: { metadata: { annotations: { [key]: value } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch, opts),
        ),
      );
    },
  };
}

function makeApis(kc: KubeConfig): Apis {
  return {
    custom: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    server: displayServer(kc.getCurrentCluster()?.server ?? ''),
  };
}

/** The server's origin only: a URL may carry user:password. */
function displayServer(server: string): string {
  try {
    const url = new URL(server);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return '(unparseable server address)';
  }
}

/** client-node's ApiException carries the HTTP status as `code`: read it as kube-errors.ts does. */
function kubeOutcome(err: unknown, okOn404: boolean): PeerOutcome {
  const status = statusOf(err);
  if (status === 404 && okOn404) return 'ok';
  return status ? peerOutcomeOfStatus(status) : peerOutcomeOfError(err);
}

/** Aborts each request after `ms` (client-node sets no timeout of its own). */
export function timeoutOptions(ms: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (request: RequestContext) => {
          request.setSignal(AbortSignal.timeout(ms));
          return new Observable(Promise.resolve(request));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
