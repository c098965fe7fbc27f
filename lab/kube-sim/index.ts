export { startKubeSimulator } from './server.ts';
export type { ConfigMapState, DeploymentState, ForbidRule, KubeSimCall, KubeSimOptions, KubeSimState, KubeSimulator, Verb, WatchedPlural } from './server.ts';
export { WatchHub } from './watch-hub.ts';
export { kubeconfigFor } from './kubeconfig.ts';
export {
  controllerDeployment,
  maasClusterObject,
  maasMachineObject,
  preferredSubnetConfigMap,
  type MaasClusterSpec,
  type MaasMachineSpec,
} from './scenario.ts';
export { dnsLabScenario, type DnsLabCluster, type DnsLabScenario } from './seed-scenario.ts';
