import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  CONTROLLER_CONTAINER,
  CUSTOM_DNS_ANNOTATION,
  DEFAULT_CONTROLLER_DEPLOYMENT,
  DEFAULT_CONTROLLER_NAMESPACE,
  LAST_APPLIED_DNS_HASH_ANNOTATION,
  PREFERRED_SUBNET_CONFIGMAP,
  PREFERRED_SUBNET_KEY,
} from '../../src/adapters/kube/capmaas.ts';
import type { MaasClusterObject, MaasMachineObject } from '../../src/adapters/kube/types.ts';
import type { ConfigMapState, DeploymentState } from './server.ts';

/** Builders for the objects cluster-api-provider-maas keeps, shaped as the API server serves them. */

export interface MaasClusterSpec {
  name: string;
  namespace?: string;
  /** The CAPI Cluster's name (label + owner); defaults to `name`. */
  clusterName?: string;
  /** status.network.dnsName and spec.controlPlaneEndpoint.host. */
  fqdn: string;
  dnsDomain?: string;
  port?: number;
  lastAppliedHash?: string;
  customDns?: boolean;
}

export function maasClusterObject(spec: MaasClusterSpec): MaasClusterObject {
  const clusterName = spec.clusterName ?? spec.name;
  const annotations: Record<string, string> = {};
  if (spec.lastAppliedHash !== undefined) annotations[LAST_APPLIED_DNS_HASH_ANNOTATION] = spec.lastAppliedHash;
  if (spec.customDns) annotations[CUSTOM_DNS_ANNOTATION] = 'true';
  return {
    metadata: {
      name: spec.name,
      namespace: spec.namespace ?? 'default',
      labels: { [CLUSTER_NAME_LABEL]: clusterName },
      annotations,
      ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: clusterName }],
    },
    spec: {
      dnsDomain: spec.dnsDomain ?? spec.fqdn.split('.').slice(1).join('.'),
      controlPlaneEndpoint: { host: spec.fqdn, port: spec.port ?? 6443 },
    },
    status: { ready: true, network: { dnsName: spec.fqdn } },
  };
}

export interface MaasMachineSpec {
  name: string;
  namespace?: string;
  /** The CAPI Cluster's name (the cluster-name label). */
  cluster: string;
  controlPlane?: boolean;
  systemId: string;
  zone?: string;
  /** MAAS status name; default Deployed. */
  state?: string;
  /** Default true. */
  powered?: boolean;
  externalIps?: string[];
  internalIps?: string[];
  /** true or an RFC 3339 time: the machine is being deleted. */
  deleting?: boolean | string;
  hostname?: string;
}

export function maasMachineObject(spec: MaasMachineSpec): MaasMachineObject {
  const labels: Record<string, string> = { [CLUSTER_NAME_LABEL]: spec.cluster };
  if (spec.controlPlane) labels[CONTROL_PLANE_LABEL] = '';
  const addresses = [
    ...(spec.externalIps ?? []).map((address) => ({ type: 'ExternalIP', address })),
    ...(spec.internalIps ?? []).map((address) => ({ type: 'InternalIP', address })),
    ...(spec.hostname ? [{ type: 'Hostname', address: spec.hostname }] : []),
  ];
  const machine: MaasMachineObject = {
    metadata: { name: spec.name, namespace: spec.namespace ?? 'default', labels },
    spec: { systemID: spec.systemId, providerID: `maas:///${spec.zone ?? 'default'}/${spec.systemId}` },
    status: {
      machineState: spec.state ?? 'Deployed',
      machinePowered: spec.powered ?? true,
      ...(spec.hostname ? { hostname: spec.hostname } : {}),
      addresses,
    },
  };
  if (spec.deleting) {
    machine.metadata.deletionTimestamp = typeof spec.deleting === 'string' ? spec.deleting : '2026-11-30T12:00:00Z';
  }
  return machine;
}

export function preferredSubnetConfigMap(namespace: string, cidrs: string): ConfigMapState {
  return { namespace, name: PREFERRED_SUBNET_CONFIGMAP, data: { [PREFERRED_SUBNET_KEY]: cidrs } };
}

/** The controller Deployment as config/default names it, running `image`. */
export function controllerDeployment(image: string, where: { namespace?: string; name?: string } = {}): DeploymentState {
  return {
    namespace: where.namespace ?? DEFAULT_CONTROLLER_NAMESPACE,
    name: where.name ?? DEFAULT_CONTROLLER_DEPLOYMENT,
    containers: [
      { name: 'kube-rbac-proxy', image: 'gcr.io/kubebuilder/kube-rbac-proxy:v0.8.0' },
      { name: CONTROLLER_CONTAINER, image },
    ],
  };
}
