import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { discovery, dnsResource, nodeEvent, randomApiKey, scenario, startMaasSimulator, subnet, type MaasSimulator, type SimDiscovery, type SimEvent } from './maas-sim/index.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator, type KubeSimulator } from './kube-sim/index.ts';
import { startLabRack, startRack, type LabRack, type SimulatedRack } from './rack-sim/index.ts';
import { generateKeyPair, type CommandHandler } from './ssh-sim/index.ts';
import { forwarderInstallCommand } from '../src/features/resolver/repair-steps.ts';
import { macLabScenario, startVmHost, type SimVmHost } from './vmhost-sim/index.ts';

export const LAB_USERS = {
  operator: 'U0OPS1',
  approver: 'U0LEAD1',
} as const;
export const LAB_CHANNELS = { ops: 'C0OPS', alerts: 'C0ALERTS' } as const;
export const SITE_B_SUBNET = { id: 20, cidr: '10.20.0.0/24' };
/** How long a lab machine takes to commission (the simulator's model of MAAS; real MAAS takes minutes). */
export const LAB_COMMISSIONING_MS = 2_500;
/** site-b's rack address (its resolver listens there), apart from the forwarder's: DHCP option 6 carries addresses only. */
export const SITE_B_RACK_HOST = '127.0.1.2';
/** site-b's rack.forwarderInstall, as the seed's runbook runs it on the rack. */
export const SITE_B_FORWARDER_INSTALL = 'sudo /opt/dc/dc-rack-net.sh install';
/** site-b's rack.canary: a Ready machine whose MACs never drifted, commissioned after fix-resolver's subnet change. */
export const SITE_B_CANARY = 'site-b-node10';

/** prod's API name as site-a's resolver still serves it after the wipe: the old answer, cached. */
export const PROD_API = { fqdn: 'prod-k8s.maas.example', ips: ['10.11.135.36'], cacheTtl: 300 };
/** The lab's one alertmanager.routes entry: KubeAPIDown names its cluster in the `cluster` label. */
export const LAB_ALERTMANAGER_ROUTE = { match: { alertname: 'KubeAPIDown' }, check: 'dns-check', targetLabel: 'cluster' } as const;

/**
 * MAAS's witnesses of site-b's drift: site-b's rack saw node1's regenerated MAC as an unknown
 * neighbour minutes ago, and node1's event log ends three days back with its last PXE boot and
 * the commissioning that then timed out.
 */
function siteBWitnesses(macs: ReturnType<typeof macLabScenario>, now: Date): { discoveries: SimDiscovery[]; events: SimEvent[] } {
  const node = macs.maasMachines.find((m) => m.hostname === 'site-b-node1');
  const live = macs.sites.flatMap((s) => s.vmHosts.flatMap((h) => h.state.domains)).find((d) => d.name === 'site-b-node1')?.nics[0]?.mac;
  if (!node || !live) return { discoveries: [], events: [] };
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const rack = { system_id: 'rk0b01', hostname: 'site-b-rack' };
  const ref = { system_id: node.system_id, hostname: node.hostname };
  const day = 86_400_000;
  return {
    discoveries: [discovery({ mac: live, ip: '10.20.0.157', rack, rackInterface: 'br-pxe', lastSeen: ago(3 * 60_000), fabric: 'fabric-site-b' })],
    events: [
      nodeEvent({ id: 101, node: ref, type: 'Commissioning', created: ago(3 * day + 120_000) }),
      nodeEvent({ id: 102, node: ref, type: 'PXE Request', created: ago(3 * day + 60_000), description: 'commissioning' }),
      nodeEvent({ id: 103, node: ref, type: 'Performing PXE boot', created: ago(3 * day + 60_000) }),
      nodeEvent({ id: 104, node: ref, type: 'Failed commissioning', created: ago(3 * day - 30 * 60_000), description: 'Timeout while commissioning (30 min)' }),
    ],
  };
}

/** site-b's forwarder (dnsmasq on a rack alias in the seed): not running until rack.forwarderInstall runs on the rack. */
export interface LabForwarder {
  host: string;
  port: number;
  readonly running: boolean;
  /** The rack's SSH server hands it every command; it answers only the configured install line. */
  commandHandler: CommandHandler;
  close(): Promise<void>;
}

async function startLabForwarder(): Promise<LabForwarder> {
  // Take a free port for the forwarder's address, then leave it unbound: "not running" refuses at once, as a stopped dnsmasq does.
  const placeholder = await startRack({ mode: 'healthy' });
  const { host, port } = placeholder;
  await placeholder.close();
  const install = forwarderInstallCommand(SITE_B_FORWARDER_INSTALL);
  let running: SimulatedRack | undefined;
  return {
    host,
    port,
    get running() {
      return running !== undefined;
    },
    commandHandler: async (command) => {
      if (command !== install) return undefined;
      running ??= await startRack({ mode: 'healthy', host, port });
      return { code: 0, stdout: `dc-rack-net: forwarder listening on ${host}#${port}, no-resolv\n` };
    },
    close: async () => {
      await running?.close();
    },
  };
}

/** Every simulated peer of the demo, modelled on the two incidents the project started from (a wiped API-server record, an isolated rack with regenerated MACs), on loopback only. */
export interface LabWorld {
  configPath: string;
  configText: string;
  /** The environment the config's `env:` references need. */
  env: Record<string, string>;
  maas: MaasSimulator;
  kube: Record<string, KubeSimulator>;
  racks: Record<string, LabRack>;
  /** site-b's forwarder, started by fix-resolver's install step. */
  forwarder: LabForwarder;
  vmHosts: SimVmHost[];
  /** ALERTMANAGER_TOKEN for the bot: the lab script plays Alertmanager with it. */
  alertmanagerToken: string;
  close(): Promise<void>;
}

/** site-c: an incident at scale, every MAC of this many VMs regenerated. */
export const LAB_LARGE_SITE_MACHINES = 300;

export interface LabWorldOptions {
  /** Watch site-a's VM host (`watch: { vmHosts: true }`): the lab's last step needs it; off by default, as in a real config. */
  watchVmHosts?: boolean;
}

export async function startLabWorld(options: LabWorldOptions = {}): Promise<LabWorld> {
  const closers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'maas-chatops-lab-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const siteBDhcpd = join(dir, 'site-b-dhcpd.conf');
    const client = generateKeyPair('maas-chatops-lab');
    const apiKey = randomApiKey();
    const macs = macLabScenario({ largeSite: { machines: LAB_LARGE_SITE_MACHINES } });
    const dns = dnsLabScenario();
    const maas = await startMaasSimulator({
      scenario: scenario({
        machines: macs.maasMachines,
        dnsresources: dns.maasDnsResourceInputs.map((r) => dnsResource(r)),
        subnets: [subnet({ id: SITE_B_SUBNET.id, cidr: SITE_B_SUBNET.cidr, name: 'site-b-metal', gateway_ip: '10.20.0.1', dns_servers: [], allow_dns: true, allow_proxy: true })],
        // MAAS 3.7 writes site-b's dhcpd.conf; a subnet edit alone does not rewrite it, an IP range save does.
        ipranges: [{ id: 7, type: 'dynamic', subnet: SITE_B_SUBNET.id, start_ip: '10.20.0.100', end_ip: '10.20.0.199', comment: 'site-b nodes', user: 'admin' }],
        version: '3.7.3',
        dhcp: { regionIp: '10.0.0.5', racks: [{ ip: SITE_B_RACK_HOST, subnetIds: [SITE_B_SUBNET.id], configPath: siteBDhcpd }] },
        ...siteBWitnesses(macs, new Date()),
      }),
      apiKeys: [apiKey],
      // Commissioning takes seconds here, not minutes: the demo shows it followed to Ready.
      timing: { commissioningMs: LAB_COMMISSIONING_MS },
    });
    closers.push(() => maas.close());

    const kube: Record<string, KubeSimulator> = {};
    const env: Record<string, string> = { LAB_MAAS_KEY: apiKey, LAB_SSH_KEY: client.privateKey };
    const clusters: Record<string, unknown> = {};
    for (const c of dns.clusters) {
      const sim = await startKubeSimulator({ state: c.kube });
      closers.push(() => sim.close());
      kube[c.name] = sim;
      const envName = `LAB_KUBECONFIG_${c.name.toUpperCase()}`;
      env[envName] = kubeconfigFor(sim, { namespace: c.namespace });
      clusters[c.name] = { maas: 'region-a', kube: { kubeconfig: `env:${envName}`, namespace: c.namespace } };
    }
    const clientViewOf = (rack: LabRack) => ({ resolver: `${rack.resolver.host}:${rack.resolver.port}`, via: 'rack', site: 'site-a' });

    const forwarder = await startLabForwarder();
    closers.push(() => forwarder.close());
    const racks: Record<string, LabRack> = {
      // site-a's resolver still holds prod's API name from before the wipe, as a caching resolver does.
      'site-a': await startLabRack({ mode: 'healthy', authorizedKey: client.publicKey, records: [{ name: PROD_API.fqdn, ips: PROD_API.ips, ttl: PROD_API.cacheTtl }] }),
      'site-b': await startLabRack({ mode: 'servfail', resolverHost: SITE_B_RACK_HOST, authorizedKey: client.publicKey, commandHandler: forwarder.commandHandler }),
    };
    for (const r of Object.values(racks)) closers.push(() => r.close());
    if (clusters.prod && racks['site-a']) (clusters.prod as Record<string, unknown>).clientView = clientViewOf(racks['site-a']);

    const vmHosts: SimVmHost[] = [];
    const sites: Record<string, unknown> = {};
    for (const site of macs.sites) {
      const hosts: Record<string, unknown> = { default: { user: 'ops', privateKey: 'env:LAB_SSH_KEY' } };
      for (const { address, state } of site.vmHosts) {
        const host = await startVmHost({ authorizedKey: client.publicKey, state, host: address });
        closers.push(() => host.close());
        vmHosts.push(host);
        hosts[address] = { port: host.ssh.port, hostKey: host.ssh.hostKeyFingerprint };
      }
      const rack = racks[site.name];
      const siteB = site.name === 'site-b';
      const extra = siteB ? { subnet: SITE_B_SUBNET.cidr, forwarder: `${forwarder.host}:${forwarder.port}`, dhcpdConfig: siteBDhcpd } : {};
      sites[site.name] = {
        maas: 'region-a',
        machines: { zone: site.zone },
        ...(rack ? { rack: { ...rack.rackConfig('env:LAB_SSH_KEY', extra), ...(siteB ? { forwarderInstall: SITE_B_FORWARDER_INSTALL, canary: SITE_B_CANARY } : {}) } } : {}),
        vmHosts: hosts,
        // site-a's VM host is watched (virsh event): a redefined VM is diffed at once.
        ...(options.watchVmHosts && site.name === 'site-a' ? { watch: { vmHosts: true } } : {}),
      };
    }

    const configText = stringify({
      slack: {
        alertChannel: LAB_CHANNELS.alerts,
        commandChannels: [LAB_CHANNELS.ops],
        operators: [LAB_USERS.operator, LAB_USERS.approver],
        approvers: [LAB_USERS.approver],
        selfApproval: false,
        approvalTtl: '15m',
      },
      maas: { 'region-a': { url: maas.url, apiKey: 'env:LAB_MAAS_KEY' } },
      sites,
      clusters,
      repair: { commissionPollInterval: '1s' },
      // Alertmanager's "the API server is down" is answered with the cluster's dns-check.
      alertmanager: { routes: [LAB_ALERTMANAGER_ROUTE] },
    });
    const configPath = join(dir, 'maas-chatops.yaml');
    writeFileSync(configPath, configText, { mode: 0o600 });
    return { configPath, configText, env, maas, kube, racks, forwarder, vmHosts, alertmanagerToken: randomBytes(24).toString('base64url'), close };
  } catch (err) {
    await close();
    throw err;
  }
}
