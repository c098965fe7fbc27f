import { startSshServer, type SshSimServer } from '../ssh-sim/index.ts';
import { createVmHostDir, type VmHostDir, type VmHostState } from './virsh-stub.ts';

export interface VmHostOptions {
  /** The one client public key the host accepts (OpenSSH line). */
  authorizedKey: string;
  state: VmHostState;
  /** Loopback address to listen on (default 127.0.0.1). */
  host?: string;
  port?: number;
  hostKey?: string;
}

export interface SimVmHost {
  ssh: SshSimServer;
  files: VmHostDir;
  /** Changes what virsh reports from the next call on. */
  setState(state: VmHostState): void;
  close(): Promise<void>;
}

/** A libvirt host: a loopback SSH server whose real /bin/sh finds the state-driven `virsh` stub first. */
export async function startVmHost(options: VmHostOptions): Promise<SimVmHost> {
  const files = createVmHostDir(options.state);
  let ssh: SshSimServer;
  try {
    ssh = await startSshServer({
      authorizedKey: options.authorizedKey,
      pathPrefix: [files.binDir],
      env: { LC_ALL: 'C' },
      ...(options.host ? { host: options.host } : {}),
      ...(options.port ? { port: options.port } : {}),
      ...(options.hostKey ? { hostKey: options.hostKey } : {}),
    });
  } catch (err) {
    files.remove();
    throw err;
  }
  return {
    ssh,
    files,
    setState: (state) => files.update(state),
    close: async () => {
      await ssh.close();
      files.remove();
    },
  };
}
