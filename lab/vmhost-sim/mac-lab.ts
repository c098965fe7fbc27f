import ssh2 from 'ssh2';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';
import { randomApiKey, scenario, startMaasSimulator, type MaasSimulator, type MaasSimulatorOptions, type ScenarioInput, type SimMachine } from '../maas-sim/index.ts';
import { generateKeyPair, type KeyPair } from '../ssh-sim/index.ts';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.ts';
import { startVmHost, type SimVmHost } from './vm-host.ts';
import type { VmHostState } from './virsh-stub.ts';

export interface MacLabSetup {
  machines: SimMachine[];
  sites: { name: string; zone: string; vmHosts: { address: string; state: VmHostState }[] }[];
  /** Delay the MAAS simulator adds to every answer (one round trip per request). */
  maasLatencyMs?: number;
  /** Round-trip time added to every SSH connection by a TCP proxy in front of each VM host. */
  sshRttMs?: number;
  /** `user` under vmHosts.default (default `ops`). */
  sshUser?: string;
  /** MAAS's clock and timing (commissioning): a test's fake clock lets MAAS's 30 minutes pass at once. */
  maasClock?: () => number;
  maasTiming?: MaasSimulatorOptions['timing'];
  /** More of the MAAS scenario: rack controllers, discoveries, events. */
  maas?: Omit<ScenarioInput, 'machines'>;
}

export interface MacLab {
  config: Config;
  /** The config as text and the environment its `env:` references need (for another process). */
  configText: string;
  env: Record<string, string>;
  /** MAAS client per region and a pinned SSH connector; kube is not part of this lab. */
  adapters: Adapters;
  maas: MaasSimulator;
  /** By the address the machines' power_address names. */
  vmHosts: Map<string, SimVmHost>;
  /** SSH connections that passed authentication, over all VM hosts. */
  sshConnections(): number;
  /** Commands exec'd, over all VM hosts. */
  sshCommands(): number;
  close(): Promise<void>;
}

/**
 * The MAAS simulator plus one SSH VM host per address, and the config that points at them with
 * pinned host keys. With sshRttMs the config names a latency proxy (on the same address) instead
 * of the SSH server itself, which then listens on 127.0.0.1.
 */
export async function startMacLab(setup: MacLabSetup): Promise<MacLab> {
  const client = clientKeyPair();
  const apiKey = randomApiKey();
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const maas = await startMaasSimulator({
      scenario: scenario({ ...setup.maas, machines: setup.machines }),
      apiKeys: [apiKey],
      latencyMs: setup.maasLatencyMs ?? 0,
      ...(setup.maasClock ? { clock: setup.maasClock } : {}),
      ...(setup.maasTiming ? { timing: setup.maasTiming } : {}),
    });
    closers.push(() => maas.close());
    const vmHosts = new Map<string, SimVmHost>();
    const endpoints = new Map<string, { port: number; hostKey: string }>();
    for (const site of setup.sites) {
      for (const { address, state } of site.vmHosts) {
        const proxied = setup.sshRttMs !== undefined && setup.sshRttMs > 0;
        const host = await startVmHost({ authorizedKey: client.publicKey, state, host: proxied ? '127.0.0.1' : address });
        closers.push(() => host.close());
        vmHosts.set(address, host);
        let port = host.ssh.port;
        if (proxied) {
          const proxy: LatencyProxy = await startLatencyProxy({ target: { host: host.ssh.host, port: host.ssh.port }, rttMs: setup.sshRttMs as number, host: address });
          closers.push(() => proxy.close());
          port = proxy.port;
        }
        endpoints.set(address, { port, hostKey: host.ssh.hostKeyFingerprint });
      }
    }
    const config = labConfig(setup, maas.url, endpoints);
    const env = { MAC_LAB_MAAS_KEY: apiKey, MAC_LAB_SSH_KEY: client.privateKey };
    const { config: parsed } = parseConfigText(config, { path: 'mac-lab.yaml', env });
    // One client per region, as the real adapters keep them.
    const clients = new Map<string, ClosableMaasClient>();
    const adapters: Adapters = {
      maas: (region) => {
        let c = clients.get(region);
        if (!c) {
          c = createMaasClient(parsed.maas[region] as Config['maas'][string]);
          clients.set(region, c);
        }
        return c;
      },
      kube: () => {
        throw new Error('the MAC lab has no management cluster');
      },
      ssh: createSshConnector(),
    };
    closers.push(async () => {
      await Promise.all([...clients.values()].map((c) => c.close()));
    });
    const sum = (f: (h: SimVmHost) => number) => () => [...vmHosts.values()].reduce((n, h) => n + f(h), 0);
    return { config: parsed, configText: config, env, adapters, maas, vmHosts, sshConnections: sum((h) => h.ssh.authenticated), sshCommands: sum((h) => h.ssh.commands.length), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** ssh2's generateKeyPairSync sometimes drops a leading zero byte of an ed25519 public key (about 1 in 200): draw again. */
function clientKeyPair(): KeyPair {
  for (;;) {
    const pair = generateKeyPair('mac-lab-client');
    const parsed = ssh2.utils.parseKey(pair.publicKey);
    if (!(parsed instanceof Error) && !Array.isArray(parsed)) return pair;
  }
}

function labConfig(setup: MacLabSetup, maasUrl: string, endpoints: Map<string, { port: number; hostKey: string }>): string {
  const sites: Record<string, unknown> = {};
  for (const site of setup.sites) {
    const vmHosts: Record<string, unknown> = { default: { user: setup.sshUser ?? 'ops', privateKey: 'env:MAC_LAB_SSH_KEY' } };
    for (const { address } of site.vmHosts) {
      const e = endpoints.get(address);
      if (e) vmHosts[address] = { port: e.port, hostKey: e.hostKey };
    }
    sites[site.name] = { maas: 'region-a', machines: { zone: site.zone }, vmHosts };
  }
  return JSON.stringify({ maas: { 'region-a': { url: maasUrl, apiKey: 'env:MAC_LAB_MAAS_KEY' } }, sites }, null, 2);
}
