/** The parts of Cluster API MAAS objects the checks read (spectrocloud/cluster-api-provider-maas api/ and controllers/). */

export interface KubeObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  resourceVersion?: string;
  ownerReferences?: { apiVersion?: string; kind: string; name: string; uid?: string }[];
}

export interface MaasClusterObject {
  metadata: KubeObjectMeta;
  spec?: { controlPlaneEndpoint?: { host?: string; port?: number }; dnsDomain?: string };
  status?: { network?: { dnsName?: string }; ready?: boolean };
}

export interface MaasMachineObject {
  metadata: KubeObjectMeta;
  spec?: { systemID?: string; providerID?: string };
  status?: {
    machineState?: string;
    machinePowered?: boolean;
    hostname?: string;
    addresses?: { type: string; address: string }[];
  };
}

/** Reads and the one write (the hash annotation) the jobs need from the management cluster. */
export interface KubeClient {
  /** null when the MaasCluster does not exist (404). */
  getMaasCluster(namespace: string, name: string): Promise<MaasClusterObject | null>;
  /** MaasMachines labelled cluster.x-k8s.io/cluster-name=<cluster>. */
  listMaasMachines(namespace: string, clusterName: string): Promise<MaasMachineObject[]>;
  /** The ConfigMap maas-preferred-subnet's CIDRs, split and trimmed as the controller does; null when it does not exist. */
  getPreferredSubnets(namespace: string): Promise<string[] | null>;
  /** The controller Deployment's `manager` container image (else the first); null when absent. */
  getDeploymentImage(namespace: string, name: string): Promise<string | null>;
  setMaasClusterAnnotation(namespace: string, name: string, key: string, value: string): Promise<void>;
}
