import { dnsHash, EMPTY_SET_HASH } from '../../src/features/dns/dns-hash.ts';
import type { DnsResource } from '../../src/adapters/maas/types.ts';
import { controllerDeployment, maasClusterObject, maasMachineObject, preferredSubnetConfigMap } from './scenario.ts';
import type { KubeSimState } from './server.ts';

/**
 * The DNS part of the lab, modelled on the API record wipe (PCP-6608). Addresses are data only: nothing
 * ever connects to them. Each cluster has its own kube state because a Palette cluster runs its
 * own Cluster API controllers (which is why a wiped record cut the controller off too).
 */
export interface DnsLabCluster {
  /** The config key and MaasCluster name. */
  name: string;
  namespace: string;
  fqdn: string;
  /** For one kube simulator per cluster (startKubeSimulator({ state })). */
  kube: KubeSimState;
  /** The MAAS DNS resource for `fqdn`, also in DnsLabScenario.maasDnsResources. */
  dnsResource: DnsResource;
  controllerImage: string;
  /** What `dns-check <name>` should say. */
  expected: { status: 'ok' | 'critical'; codes: string[] };
}

export interface DnsLabScenario {
  clusters: DnsLabCluster[];
  /** Plain MAAS `GET dnsresources/` objects (as the API answers). */
  maasDnsResources: DnsResource[];
  /** The same records as input for the MAAS simulator's `dnsResource()` builder. */
  maasDnsResourceInputs: { id: number; fqdn: string; ips: string[]; address_ttl: number | null }[];
}

const IMAGE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller';

/**
 * `prod`: one control-plane machine that was briefly powered off; an unpatched controller
 * (v4.9.1) PUT an empty set and cached SHA-256(""): the record is empty although the machine
 * runs again. `staging`: three control-plane machines, record and hash in sync, fixed controller.
 */
export function dnsLabScenario(): DnsLabScenario {
  const prod = prodCluster();
  const staging = stagingCluster();
  const records = [prod.dnsResource, staging.dnsResource];
  return {
    clusters: [prod, staging],
    maasDnsResources: records,
    maasDnsResourceInputs: records.map((r) => ({ id: r.id, fqdn: r.fqdn, ips: r.ip_addresses.map((a) => a.ip), address_ttl: r.address_ttl })),
  };
}

function prodCluster(): DnsLabCluster {
  const name = 'prod';
  const namespace = 'default';
  const fqdn = 'prod-k8s.maas.example';
  const controllerImage = `${IMAGE}:v0.6.1-spectro-4.9.1`;
  return {
    name,
    namespace,
    fqdn,
    controllerImage,
    kube: {
      maasClusters: [maasClusterObject({ name, namespace, fqdn, lastAppliedHash: EMPTY_SET_HASH })],
      maasMachines: [
        maasMachineObject({ name: 'prod-cp-0', namespace, cluster: name, controlPlane: true, systemId: 'k7dx3p', zone: 'site-a', externalIps: ['10.11.135.36'], hostname: 'prod-cp-0' }),
        maasMachineObject({ name: 'prod-worker-0', namespace, cluster: name, systemId: 'm4q8rt', zone: 'site-a', externalIps: ['10.11.135.41'], hostname: 'prod-worker-0' }),
        maasMachineObject({ name: 'prod-worker-1', namespace, cluster: name, systemId: 'n2w6yc', zone: 'site-a', externalIps: ['10.11.135.42'], hostname: 'prod-worker-1' }),
      ],
      configMaps: [preferredSubnetConfigMap(namespace, '10.11.135.0/24')],
      deployments: [controllerDeployment(controllerImage)],
    },
    dnsResource: { id: 41, fqdn, address_ttl: 10, ip_addresses: [], resource_records: [] },
    expected: { status: 'critical', codes: ['DNS_CONTROLLER_VULNERABLE', 'DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED'] },
  };
}

function stagingCluster(): DnsLabCluster {
  const name = 'staging';
  const namespace = 'default';
  const fqdn = 'staging-k8s.maas.example';
  const controllerImage = `${IMAGE}:v0.6.1-spectro-4.9.3`;
  const cpIps = ['10.11.136.21', '10.11.136.22', '10.11.136.23'];
  return {
    name,
    namespace,
    fqdn,
    controllerImage,
    kube: {
      maasClusters: [maasClusterObject({ name, namespace, fqdn, lastAppliedHash: dnsHash(cpIps) })],
      maasMachines: [
        ...cpIps.map((ip, i) =>
          maasMachineObject({ name: `staging-cp-${i}`, namespace, cluster: name, controlPlane: true, systemId: `s${i}cp7h`, zone: 'site-b', externalIps: [ip], hostname: `staging-cp-${i}` }),
        ),
        maasMachineObject({ name: 'staging-worker-0', namespace, cluster: name, systemId: 'sw0e4k', zone: 'site-b', externalIps: ['10.11.136.31'], hostname: 'staging-worker-0' }),
      ],
      configMaps: [],
      deployments: [controllerDeployment(controllerImage)],
    },
    dnsResource: { id: 42, fqdn, address_ttl: 10, ip_addresses: cpIps.map((ip) => ({ ip })), resource_records: [] },
    expected: { status: 'ok', codes: [] },
  };
}
