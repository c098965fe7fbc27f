import { startSshServer, type CommandHandler, type SshSimServer } from '../ssh-sim/index.ts';
import { digPathPrefix } from './dig-on-path.ts';
import { startRack, type CachedRecord, type RackMode, type SimulatedRack } from './rack.ts';

export interface LabRackOptions {
  mode: RackMode;
  /** The worker's public key (OpenSSH line), accepted by the rack's SSH server. */
  authorizedKey: string;
  zone?: string;
  serial?: number;
  /** The loopback address the rack's resolver listens on (default 127.0.0.1): the rack's own address, as DHCP option 6 names it. */
  resolverHost?: string;
  /** Cached A answers the resolver holds (e.g. the API name), with their TTL. */
  records?: CachedRecord[];
  /** Answers some commands itself (e.g. fix-resolver's forwarderInstall); the rest run in /bin/sh. */
  commandHandler?: CommandHandler;
}

export interface LabRack {
  resolver: SimulatedRack;
  ssh: SshSimServer;
  /** True when dig is the stand-in (bind9-dnsutils is not installed). */
  digStubbed: boolean;
  /** The site's `rack:` config block for this rack, with privateKey as the given reference. */
  rackConfig(privateKeyRef: string, extra?: { forwarder?: string; subnet?: string; dhcpdConfig?: string }): Record<string, unknown>;
  close(): Promise<void>;
}

/** A whole simulated rack: its resolver in the given mode, and an SSH server where dig runs. */
export async function startLabRack(options: LabRackOptions): Promise<LabRack> {
  const dig = digPathPrefix();
  const resolver = await startRack({
    mode: options.mode,
    ...(options.zone ? { zone: options.zone } : {}),
    ...(options.serial ? { serial: options.serial } : {}),
    ...(options.resolverHost ? { host: options.resolverHost } : {}),
    ...(options.records ? { records: options.records } : {}),
  });
  let ssh: SshSimServer;
  try {
    ssh = await startSshServer({
      authorizedKey: options.authorizedKey,
      pathPrefix: dig.pathPrefix,
      ...(options.commandHandler ? { commandHandler: options.commandHandler } : {}),
    });
  } catch (err) {
    await resolver.close();
    dig.cleanup();
    throw err;
  }
  return {
    resolver,
    ssh,
    digStubbed: dig.stubbed,
    rackConfig: (privateKeyRef, extra = {}) => ({
      resolver: `${resolver.host}:${resolver.port}`,
      zone: resolver.zone,
      probe: 'ssh',
      ssh: { host: ssh.host, port: ssh.port, user: 'ops', privateKey: privateKeyRef, hostKey: ssh.hostKeyFingerprint },
      ...extra,
    }),
    close: async () => {
      await Promise.all([ssh.close(), resolver.close()]);
      dig.cleanup();
    },
  };
}
