import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quoteArg } from '../../src/adapters/ssh/shell-quote.ts';

/** One NIC of a simulated libvirt domain. */
export interface VmNic {
  mac: string;
  type?: string;
  source?: string;
  model?: string;
}

export interface VmDomain {
  name: string;
  nics: VmNic[];
  /** A shut-off domain shows `-` as its interface, as real hypervisors print it. */
  running?: boolean;
}

/** One libvirt lifecycle event, as `virsh event` prints it: `Undefined Removed`, `Defined Added`. */
export interface VmLifecycleEvent {
  domain: string;
  event: string;
  detail: string;
}

/** What a simulated VM host's libvirt holds. An array, so any domain name (even `__proto__`) is data. */
export interface VmHostState {
  domains: VmDomain[];
  /** Lifecycle events so far, oldest first; a running `virsh event` prints those appended after it started. */
  events?: VmLifecycleEvent[];
  /** Times libvirtd restarted: each ends every running `virsh event`, as its connection closing does. */
  libvirtRestarts?: number;
  /** The URI virsh must be given (default qemu:///system); any other answers "failed to connect". */
  uri?: string;
  /** Time a real libvirt takes: a connection per virsh process (and per `connect`), an RPC per command. */
  costs?: { connectMs: number; commandMs: number };
}

/**
 * A `virsh` for the PATH of a simulated VM host: a two-line sh wrapper that runs virsh-stub.mjs
 * on this host's state.json, so every call reads the state as it stands. The stub takes
 * virsh's batch input (one `;`-separated argument, parsed by virsh's own quoting rules) as well
 * as one command in argv, and prints as libvirt-clients 9 does (test/fixtures/virsh).
 */
export function renderVirshWrapper(statePath: string): string {
  const stub = fileURLToPath(new URL('./virsh-stub.mjs', import.meta.url));
  return `#!/bin/sh\n# virsh stub of maas-chatops vmhost-sim: do not edit\nexec ${quoteArg(process.execPath)} ${quoteArg(stub)} ${quoteArg(statePath)} "$@"\n`;
}

/** A directory holding state.json and bin/virsh for one simulated VM host. */
export interface VmHostDir {
  dir: string;
  binDir: string;
  statePath: string;
  /** Replaces the state (and the stub) atomically. */
  update(state: VmHostState): void;
  /** How many `virsh event` processes have started listening on this host so far. */
  eventListeners(): number;
  remove(): void;
}

export function createVmHostDir(state: VmHostState): VmHostDir {
  const dir = mkdtempSync(join(tmpdir(), 'vmhost-sim-'));
  const binDir = join(dir, 'bin');
  mkdirSync(binDir);
  const statePath = join(dir, 'state.json');
  const update = (next: VmHostState) => writeAtomically(statePath, `${JSON.stringify(next, null, 2)}\n`);
  update(state);
  writeAtomically(join(binDir, 'virsh'), renderVirshWrapper(statePath), 0o755);
  const eventListeners = () => (existsSync(join(dir, 'event-listeners.log')) ? readFileSync(join(dir, 'event-listeners.log'), 'utf8').split('\n').filter(Boolean).length : 0);
  return { dir, binDir, statePath, update, eventListeners, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function writeAtomically(path: string, text: string, mode?: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
}
