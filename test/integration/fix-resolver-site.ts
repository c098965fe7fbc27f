/**
 * A rack-only site for the fix-resolver tests, all real parts on loopback: an ssh2 server that runs
 * commands in /bin/sh (the rack), the installed dig, a real dnsmasq that SERVFAILs as the rack's
 * resolver, a real dnsmasq as the forwarder (running, or started as a daemon by the configured
 * rack.forwarderInstall line), and the MAAS simulator holding the node-facing subnet, which writes
 * the rack's dhcpd.conf (a real file the rack's shell reads) as MAAS 3.6 or 3.7 would.
 */
import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import type { JobContext } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { randomApiKey, scenario, startMaasSimulator, subnet, type MaasSimulator, type MaasSimulatorOptions, type SimIpRange, type SimMachine, type SimRules, type SubnetInput } from '../../lab/maas-sim/index.ts';
import { onPath, startDnsmasq } from '../../lab/rack-sim/index.ts';
import { generateKeyPair, startSshServer, type CommandHandler, type SshSimServer } from '../../lab/ssh-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';

export const NODE_SUBNET = { id: 20, cidr: '10.20.0.0/24' };

/** Where the rack's dhcpd.conf sets option 6 for the node-facing subnet, as the findings name it. */
export function option6Source(path: string, servers: string): string {
  const line = readFileSync(path, 'utf8').split('\n').findIndex((l) => l.includes(`option domain-name-servers ${servers};`)) + 1;
  return `\`option domain-name-servers ${servers};\` at ${path}:${line}, in subnet ${NODE_SUBNET.cidr}`;
}
/** The rack's own address (its resolver listens there), apart from the forwarder's 127.0.0.1: option 6 carries addresses only. */
export const RACK_HOST = '127.0.1.2';
export const REGION_IP = '10.0.0.5';
/** The node-facing subnet's dynamic range: re-saving it has MAAS 3.7 rewrite dhcpd.conf. */
export const DYNAMIC_RANGE = { id: 7, type: 'dynamic' as const, subnet: NODE_SUBNET.id, start_ip: '10.20.0.100', end_ip: '10.20.0.199', comment: 'site-b nodes', user: 'admin' };
export const FORWARDER_SERIAL = 2026113005;

export interface ResolverSiteOptions {
  /** The rack's own resolver: the maas-agent one SERVFAILs (default), or a healthy one. */
  rackResolver?: 'servfail' | 'authoritative';
  /** `running`: an authoritative dnsmasq answers at rack.forwarder; `stopped`: nothing listens there. */
  forwarder?: 'running' | 'stopped';
  /** rack.forwarderInstall: `daemon` starts a real dnsmasq daemon at rack.forwarder; `noop` exits 0 and starts nothing; a string is used as is. */
  install?: 'daemon' | 'noop' | ((daemon: string) => string);
  /** The node-facing subnet's fields (id 20, 10.20.0.0/24 by default); `extraSubnets` are added as they are. */
  subnet?: Partial<SubnetInput>;
  extraSubnets?: SubnetInput[];
  /** rack.subnet; default the CIDR. */
  subnetSelector?: string | number | null;
  rules?: Partial<SimRules>;
  /** More of the MAAS simulator: machines (a canary) and its clock and timing. */
  machines?: SimMachine[];
  maasOptions?: Pick<MaasSimulatorOptions, 'clock' | 'timing'>;
  /** rack.canary. */
  canary?: string;
  commandHandler?: CommandHandler;
  slackYaml?: string;
  /** Which MAAS writes the rack's dhcpd.conf (default 3.7); `none`: rack.dhcpdConfig names a file that does not exist. */
  dhcp?: '3.6' | '3.7' | 'none';
  /** 3.6: how long the rack takes to apply the trigger's rewrite (default at once). */
  dhcpTriggerDelayMs?: number;
  /** The subnet's IP ranges (default: DYNAMIC_RANGE). */
  ipranges?: SimIpRange[];
}

export interface ResolverSite {
  maas: MaasSimulator;
  ssh: SshSimServer;
  ctx: JobContext;
  config: Config;
  secrets: string[];
  yaml: string;
  env: Record<string, string>;
  forwarderPort: number;
  rackResolverPort: number;
  /** The daemon line rack.forwarderInstall wraps (for a test that needs it). */
  daemonLine: string;
  /** The SSH commands that ran rack.forwarderInstall. */
  installs(): string[];
  /** The rack's dhcpd.conf (written by the simulator as MAAS would). */
  dhcpdPath: string;
  /** The MAAS calls that changed something. */
  writes(): MaasSimulator['calls'];
  close(): Promise<void>;
}

export async function startResolverSite(options: ResolverSiteOptions = {}): Promise<ResolverSite> {
  const closers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'fix-resolver-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const pidFile = join(dir, 'forwarder.pid');
    closers.push(() => killDaemon(pidFile));

    const rackResolver = await startDnsmasq({ mode: options.rackResolver ?? 'servfail', host: RACK_HOST });
    closers.push(() => rackResolver.close());
    let forwarderPort: number;
    if ((options.forwarder ?? 'running') === 'running') {
      const running = await startDnsmasq({ mode: 'authoritative', serial: FORWARDER_SERIAL });
      closers.push(() => running.close());
      forwarderPort = running.port;
    } else {
      forwarderPort = await freeDnsPort();
    }
    const daemonLine =
      `dnsmasq --conf-file=/dev/null --pid-file=${pidFile} --no-resolv --no-hosts --port=${forwarderPort} --listen-address=127.0.0.1 --bind-interfaces ` +
      `--auth-server=ns1.maas-internal,127.0.0.1 --auth-zone=maas-internal --auth-soa=${FORWARDER_SERIAL},hostmaster.maas-internal </dev/null >/dev/null 2>&1`;
    const install = options.install === 'daemon' ? daemonLine : options.install === 'noop' ? 'true' : options.install ? options.install(daemonLine) : undefined;

    const client = generateKeyPair('fix-resolver-worker');
    const ssh = await startSshServer({ authorizedKey: client.publicKey, ...(options.commandHandler ? { commandHandler: options.commandHandler } : {}) });
    closers.push(() => ssh.close());

    const apiKey = randomApiKey();
    const subnets = [
      subnet({ ...NODE_SUBNET, name: 'site-b-metal', gateway_ip: '10.20.0.1', dns_servers: [], allow_dns: true, allow_proxy: false, managed: false, ...options.subnet }),
      ...(options.extraSubnets ?? []).map((s) => subnet(s)),
    ];
    const dhcpdPath = join(dir, 'dhcpd.conf');
    const release = options.dhcp ?? '3.7';
    const dhcp = release === 'none' ? undefined : { regionIp: REGION_IP, racks: [{ ip: RACK_HOST, subnetIds: [NODE_SUBNET.id], configPath: dhcpdPath }], ...(options.dhcpTriggerDelayMs ? { triggerDelayMs: options.dhcpTriggerDelayMs } : {}) };
    const version = release === '3.6' ? '3.6.5' : '3.7.3';
    const world = scenario({ version, subnets, machines: options.machines ?? [], ipranges: options.ipranges ?? [DYNAMIC_RANGE], ...(dhcp ? { dhcp } : {}) });
    const maas = await startMaasSimulator({ scenario: world, apiKeys: [apiKey], ...(options.rules ? { rules: options.rules } : {}), ...options.maasOptions });
    closers.push(() => maas.close());

    const selector = options.subnetSelector === undefined ? NODE_SUBNET.cidr : options.subnetSelector;
    const rackLines = [
      `      resolver: ${RACK_HOST}:${rackResolver.port}`,
      '      zone: maas-internal',
      '      probe: ssh',
      `      ssh: { host: 127.0.0.1, port: ${ssh.port}, user: ops, privateKey: env:RACK_KEY, hostKey: "${ssh.hostKeyFingerprint}" }`,
      `      forwarder: 127.0.0.1:${forwarderPort}`,
      ...(install ? [`      forwarderInstall: ${JSON.stringify(install)}`] : []),
      ...(selector === null ? [] : [`      subnet: ${typeof selector === 'number' ? selector : JSON.stringify(selector)}`]),
      `      dhcpdConfig: ${dhcpdPath}`,
      ...(options.canary ? [`      canary: ${options.canary}`] : []),
    ];
    const yaml = [options.slackYaml ?? '', 'maas:', `  region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY }`, 'sites:', '  site-b:', '    maas: region-a', '    rack:', ...rackLines, ''].join('\n');
    const env = { MAAS_KEY: apiKey, RACK_KEY: client.privateKey };
    const loaded = parseConfigText(yaml, { path: 'fix-resolver.yaml', env });
    const config = loaded.config;
    const adapters: Adapters = {
      maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
      kube: () => {
        throw new Error('fix-resolver must not call kube');
      },
      ssh: createSshConnector(),
    };
    return {
      maas,
      ssh,
      ctx: { config, adapters, log: silentLogger() },
      config,
      secrets: loaded.secrets,
      yaml,
      env,
      forwarderPort,
      rackResolverPort: rackResolver.port,
      daemonLine,
      dhcpdPath,
      installs: () => (install ? ssh.commands.filter((c) => c.startsWith('sh -c ')) : []),
      writes: () => maas.calls.filter((c) => c.method !== 'GET'),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function killDaemon(pidFile: string): void {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

/** A loopback port free for both UDP and TCP (dnsmasq binds both), left unbound: a forwarder that is not running. */
export async function freeDnsPort(): Promise<number> {
  for (;;) {
    const port = randomInt(20_000, 60_000);
    if ((await udpFree(port)) && (await tcpFree(port))) return port;
  }
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

function tcpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * For a test file: fails at once without dig or dnsmasq, and returns a starter whose sites are all
 * closed after each test. `defaults` are this file's options, which a test's own override.
 */
export function resolverSitesPerTest(defaults: ResolverSiteOptions = {}): (options?: ResolverSiteOptions) => Promise<ResolverSite> {
  beforeAll(() => {
    for (const program of ['dig', 'dnsmasq']) {
      if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq (.ci/run does this)`);
    }
  });
  const sites: ResolverSite[] = [];
  afterEach(async () => {
    for (const s of sites.splice(0).reverse()) await s.close();
  });
  return async (options = {}) => {
    const s = await startResolverSite({ ...defaults, ...options });
    sites.push(s);
    return s;
  };
}
