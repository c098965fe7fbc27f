/**
 * Names that cluster-api-provider-maas uses (spectrocloud/cluster-api-provider-maas:
 * api/v1beta1/groupversion_info.go, controllers/maascluster_controller.go,
 * pkg/maas/scope/cluster.go, pkg/util/cluster.go, config/default/kustomization.yaml).
 */
export const CAPMAAS_GROUP = 'infrastructure.cluster.x-k8s.io';
export const CAPMAAS_VERSION = 'v1beta1';
export const MAAS_CLUSTER_PLURAL = 'maasclusters';
export const MAAS_MACHINE_PLURAL = 'maasmachines';

/** On the MaasCluster: the hash of the IP set the controller last applied to MAAS DNS. */
export const LAST_APPLIED_DNS_HASH_ANNOTATION = 'infrastructure.cluster.x-k8s.io/last-applied-dns-hash';
/** On the MaasCluster: present (any value) = the controller manages no DNS. */
export const CUSTOM_DNS_ANNOTATION = 'spectrocloud.com/custom-dns-provided';

/** Cluster API labels (sigs.k8s.io/cluster-api: ClusterNameLabel, MachineControlPlaneLabel). */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';

/** Read from the Cluster's namespace; absent = no subnet filter. */
export const PREFERRED_SUBNET_CONFIGMAP = 'maas-preferred-subnet';
export const PREFERRED_SUBNET_KEY = 'preferredSubnets';

/** MachineRunningStates in api/v1beta1/types.go. */
export const MACHINE_RUNNING_STATES: readonly string[] = ['Deploying', 'Deployed'];

/** kustomize namespace + namePrefix applied to the `controller-manager` Deployment. */
export const DEFAULT_CONTROLLER_NAMESPACE = 'capmaas-system';
export const DEFAULT_CONTROLLER_DEPLOYMENT = 'capmaas-controller-manager';
/** The manager container's name in config/manager/manager.yaml. */
export const CONTROLLER_CONTAINER = 'manager';
