import { startSshServer, type SshSimServer } from '../ssh-sim/index.ts';
import { createVmHostDir, type VmHostDir, type VmHostState, type VmLifecycleEvent, type VmNic } from './virsh-stub.ts';

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
  /** What virsh reports now. */
  state(): VmHostState;
  /**
   * What an OpenTofu replace does to a domain: undefine it and define it again with new NICs.
   * A running `virsh event` sees `Undefined Removed`, then `Defined Added` (shut off) or
   * `Defined Updated` (running: libvirt keeps it as a transient domain in between), as real
   * libvirt prints them (test/fixtures/virsh/event-lifecycle-*.txt).
   */
  redefine(domain: string, nics: VmNic[]): void;
  /** Appends lifecycle events without changing any domain. */
  emit(...events: VmLifecycleEvent[]): void;
  /** libvirtd restarts: a running `virsh event` says it was disconnected and ends. */
  restartLibvirt(): void;
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
  let state = options.state;
  const setState = (next: VmHostState) => {
    state = next;
    files.update(next);
  };
  return {
    ssh,
    files,
    setState,
    state: () => state,
    redefine: (name, nics) => {
      const found = state.domains.find((d) => d.name === name);
      if (!found) throw new Error(`vmhost-sim: no domain ${name} to redefine`);
      const defined = found.running === false ? 'Added' : 'Updated';
      setState({
        ...state,
        domains: state.domains.map((d) => (d === found ? { ...d, nics } : d)),
        events: [...(state.events ?? []), { domain: name, event: 'Undefined', detail: 'Removed' }, { domain: name, event: 'Defined', detail: defined }],
      });
    },
    emit: (...events) => setState({ ...state, events: [...(state.events ?? []), ...events] }),
    restartLibvirt: () => setState({ ...state, libvirtRestarts: (state.libvirtRestarts ?? 0) + 1 }),
    close: async () => {
      await ssh.close();
      files.remove();
    },
  };
}
