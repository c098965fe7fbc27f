import { jitteredBackoffMs } from '../../core/jittered-backoff.ts';
import type { SshSession, SshTarget, StreamEnd } from '../../adapters/ssh/types.ts';
import { parseLifecycleLine } from '../../adapters/ssh/virsh-events.ts';
import { virshEventCommand } from '../../adapters/ssh/virsh-events.ts';
import type { Config, SiteConfig } from '../../core/config.ts';
import { ChatopsError, describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { batchKey, batchTriggers, LifecycleChanges } from '../../features/macs/lifecycle-changes.ts';
import { readDomainStates } from '../../features/macs/domain-states.ts';
import type { WatchedVmHost } from '../../features/macs/watched-vm-hosts.ts';

export type VmHostWatchState = 'connecting' | 'watching' | 'backing-off' | 'stopped';
/** dropped: the SSH connection closed under virsh; exited: virsh ended on its own; error: no session could be opened. */
export type VmHostRestartReason = 'dropped' | 'exited' | 'error';

/** One VM host's watch, as /readyz and the metrics show it. */
export interface VmHostWatchHealth {
  site: string;
  vmHost: string;
  state: VmHostWatchState;
  /** virsh event is running over an open session. */
  healthy: boolean;
  /** SSH sessions opened for the watch so far. */
  sessions: number;
  restarts: Record<VmHostRestartReason, number>;
  /** Lifecycle events read. */
  events: number;
  lastError: string | null;
  /** Why it stopped for good (a refused host key, incomplete SSH settings); the scheduled scan still reads the host. */
  stoppedReason?: string;
}

export interface VmHostWatchTuning {
  /** Quiet time after a Defined before the mac-diff is queued (default 500 ms). */
  debounceMs?: number;
  /** How long an Undefined waits for the domain to be defined again (default 10 s). */
  redefineGraceMs?: number;
  /** How often the site's VM hosts are listed again from MAAS (default 15 min). */
  rediscoverEveryMs?: number;
  backoff?: { baseMs: number; maxMs: number };
  /** A session that ran this long is a working one: the next failure backs off from the start (default 30 s). */
  stableAfterMs?: number;
  random?: () => number;
  /** How a backoff waits; tests record the delays. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface VmHostWatchOptions extends VmHostWatchTuning {
  config: Config;
  connect: (target: SshTarget) => Promise<SshSession>;
  /** The site's VM hosts (src/features/macs/watched-vm-hosts.ts in production). */
  discover: (site: SiteConfig) => Promise<WatchedVmHost[]>;
  /** Queues the site's mac-diff; `key` is the same in every process that saw the same events. */
  scan: (site: string, triggers: string[], key: string) => Promise<void>;
  onRestart?: (reason: VmHostRestartReason) => void;
  onEvent?: (event: string) => void;
  log: Logger;
}

export interface VmHostWatches {
  health(): VmHostWatchHealth[];
  /** Sites whose VM hosts could not be listed from MAAS, with the reason. */
  discoveryErrors(): { site: string; error: string }[];
  close(): Promise<void>;
}

const DEFAULTS = { debounceMs: 500, redefineGraceMs: 10_000, rediscoverEveryMs: 15 * 60_000, backoff: { baseMs: 1_000, maxMs: 60_000 }, stableAfterMs: 30_000 };
/** However busy a host is, its changes wait no longer than this for a mac-diff. */
const MAX_BATCH_WAIT_MS = 30_000;

/**
 * Holds one SSH session per VM host of every site with `watch.vmHosts: true`, running
 * `virsh event --loop --event lifecycle`. A domain defined or undefined (an OpenTofu replace:
 * new NICs, new MACs) queues that site's mac-diff, debounced. Sessions that drop or fail come
 * back with backoff and jitter; a refused host key stops that host's watch with the reason.
 * The scheduled scans stay: this only makes them early.
 */
export function startVmHostWatches(options: VmHostWatchOptions): VmHostWatches {
  const sites = Object.values(options.config.sites)
    .filter((site) => site.watchVmHosts)
    .map((site) => new SiteWatch(site, options));
  for (const site of sites) site.start();
  return {
    health: () => sites.flatMap((s) => s.health()),
    discoveryErrors: () => sites.flatMap((s) => (s.discoveryError ? [{ site: s.name, error: s.discoveryError }] : [])),
    close: async () => {
      await Promise.all(sites.map((s) => s.close()));
    },
  };
}

class SiteWatch {
  readonly name: string;
  discoveryError: string | null = null;
  readonly #hosts = new Map<string, HostWatch>();
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly site: SiteConfig,
    private readonly options: VmHostWatchOptions,
  ) {
    this.name = site.name;
    this.#log = options.log.child({ component: 'vm-host-watch', site: site.name });
  }

  start(): void {
    void this.#refresh();
  }

  health(): VmHostWatchHealth[] {
    return [...this.#hosts.values()].map((h) => h.health());
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await Promise.all([...this.#hosts.values()].map((h) => h.close()));
  }

  async #refresh(): Promise<void> {
    let next = this.options.rediscoverEveryMs ?? DEFAULTS.rediscoverEveryMs;
    try {
      const found = await this.options.discover(this.site);
      if (this.#closed) return;
      this.discoveryError = null;
      this.#apply(found);
    } catch (err) {
      this.discoveryError = describeError(err);
      this.#log.warn({ err: this.discoveryError }, 'cannot list the VM hosts to watch; the scheduled mac-diff still runs');
      next = Math.min(next, (this.options.backoff ?? DEFAULTS.backoff).maxMs);
    }
    if (!this.#closed) this.#timer = setTimeout(() => void this.#refresh(), next).unref();
  }

  #apply(found: WatchedVmHost[]): void {
    const keep = new Set(found.map((h) => h.vmHost));
    for (const [vmHost, watch] of this.#hosts) {
      if (keep.has(vmHost)) continue;
      this.#log.info({ vmHost }, 'no machine of the site names this VM host any more: its watch ends');
      void watch.close();
      this.#hosts.delete(vmHost);
    }
    for (const host of found) {
      if (this.#hosts.has(host.vmHost)) continue;
      const watch = new HostWatch(this.site.name, host, this.options, this.#log.child({ vmHost: host.vmHost }));
      this.#hosts.set(host.vmHost, watch);
      watch.start();
    }
  }
}

class HostWatch {
  readonly #o: VmHostWatchOptions;
  readonly #changes = new LifecycleChanges();
  readonly #restarts: Record<VmHostRestartReason, number> = { dropped: 0, exited: 0, error: 0 };
  #state: VmHostWatchState = 'connecting';
  #sessions = 0;
  #events = 0;
  #failures = 0;
  #lastError: string | null = null;
  #stoppedReason: string | undefined;
  #session: SshSession | undefined;
  #batchTimer: NodeJS.Timeout | undefined;
  #batchStartedAt: number | null = null;
  #wake: (() => void) | undefined;
  #closed = false;

  constructor(
    private readonly site: string,
    private readonly host: WatchedVmHost,
    options: VmHostWatchOptions,
    private readonly log: Logger,
  ) {
    this.#o = options;
  }

  start(): void {
    if ('problem' in this.host) {
      this.#stop(this.host.problem);
      return;
    }
    const target = this.host.target;
    void this.#run(target).catch((err: unknown) => this.#stop(`the watch failed: ${describeError(err)}`));
  }

  health(): VmHostWatchHealth {
    return {
      site: this.site,
      vmHost: this.host.vmHost,
      state: this.#state,
      healthy: this.#state === 'watching',
      sessions: this.#sessions,
      restarts: { ...this.#restarts },
      events: this.#events,
      lastError: this.#lastError,
      ...(this.#stoppedReason ? { stoppedReason: this.#stoppedReason } : {}),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#state = 'stopped';
    clearTimeout(this.#batchTimer);
    this.#wake?.();
    this.#session?.close();
  }

  async #run(target: SshTarget): Promise<void> {
    while (!this.#closed) {
      this.#state = 'connecting';
      let session: SshSession;
      try {
        session = await this.#o.connect(target);
      } catch (err) {
        if (isPermanent(err)) {
          this.#stop(describeError(err));
          return;
        }
        await this.#failed('error', describeError(err));
        continue;
      }
      this.#sessions++;
      if (this.#closed) {
        session.close();
        return;
      }
      this.#session = session;
      const end = await this.#listen(session);
      session.close();
      this.#session = undefined;
      if (this.#closed) return;
      if (end.ranMs >= (this.#o.stableAfterMs ?? DEFAULTS.stableAfterMs)) this.#failures = 0;
      await this.#failed(end.reason, end.message);
    }
  }

  /** Runs virsh event on the session until it ends or the connection drops. */
  async #listen(session: SshSession): Promise<{ reason: VmHostRestartReason; message: string; ranMs: number }> {
    const now = this.#o.now ?? Date.now;
    const started = now();
    const closed = new Promise<StreamEnd>((resolve) => session.onClose(() => resolve({ code: null, stderr: '', dropped: true })));
    let end: StreamEnd;
    try {
      const command = await session.stream(virshEventCommand(this.host.uri), (line) => this.#line(line));
      this.#state = 'watching';
      this.log.info({ uri: this.host.uri }, 'watching libvirt lifecycle events');
      end = await Promise.race([command.done, closed]);
      command.stop();
    } catch (err) {
      return { reason: 'error', message: describeError(err), ranMs: now() - started };
    }
    const ranMs = now() - started;
    if (end.dropped) return { reason: 'dropped', message: `the SSH connection to ${this.host.vmHost} closed under virsh event`, ranMs };
    const said = end.stderr.split('\n').map((l) => l.trim()).find(Boolean);
    const status = end.code === null ? `signal ${end.signal ?? 'unknown'}` : `exit status ${end.code}`;
    return { reason: 'exited', message: `virsh event ended (${status})${said ? `: ${said}` : ''}`, ranMs };
  }

  #line(line: string): void {
    const event = parseLifecycleLine(line);
    if (!event) return;
    this.#events++;
    // Events arrive: the session works, whatever happened before it.
    this.#failures = 0;
    this.#o.onEvent?.(event.event);
    if (!this.#changes.add(event)) return;
    this.log.info({ domain: event.domain, event: `${event.event} ${event.detail}` }, 'domain definition changed');
    this.#schedule();
  }

  /** Trailing debounce: each change restarts the wait; an undefined domain waits longer for its redefinition. */
  #schedule(): void {
    const now = (this.#o.now ?? Date.now)();
    this.#batchStartedAt ??= now;
    const wait = this.#changes.awaitingRedefinition ? (this.#o.redefineGraceMs ?? DEFAULTS.redefineGraceMs) : (this.#o.debounceMs ?? DEFAULTS.debounceMs);
    clearTimeout(this.#batchTimer);
    this.#batchTimer = setTimeout(() => this.#fire(), Math.max(0, Math.min(wait, this.#batchStartedAt + MAX_BATCH_WAIT_MS - now)));
  }

  #fire(): void {
    this.#batchTimer = undefined;
    this.#batchStartedAt = null;
    if (this.#changes.empty) return;
    const batch = this.#changes.take();
    const triggers = batchTriggers(this.host.vmHost, batch);
    this.log.info({ triggers }, 'VM host changed: mac-diff runs now');
    const session = this.#session;
    const states = session ? readDomainStates(session, this.host.uri, batch.domains.map((d) => d.domain)) : Promise.resolve(null);
    states
      .then((read) => this.#o.scan(this.site, triggers, batchKey(this.site, this.host.vmHost, batch, read)))
      .catch((err: unknown) => {
        this.log.warn({ err: describeError(err) }, 'could not queue the mac-diff the watch asked for; the scheduled scan still runs');
      });
  }

  async #failed(reason: VmHostRestartReason, message: string): Promise<void> {
    this.#lastError = message;
    this.#restarts[reason]++;
    this.#o.onRestart?.(reason);
    this.#failures++;
    const delay = jitteredBackoffMs(this.#failures, this.#o.backoff ?? DEFAULTS.backoff, this.#o.random);
    this.#state = 'backing-off';
    this.log.warn({ reason, err: message, retryInMs: delay }, 'VM host watch interrupted; reconnecting');
    await this.#sleep(delay);
  }

  #sleep(ms: number): Promise<void> {
    if (this.#o.sleep) return this.#o.sleep(ms);
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #stop(reason: string): void {
    this.#state = 'stopped';
    this.#stoppedReason = reason;
    this.#lastError = reason;
    this.log.error({ reason }, `VM host watch of ${this.host.vmHost} stopped, not retried: ${reason}`);
  }
}

/** Retrying cannot help: the host key is not the pinned one, or the SSH settings are incomplete. */
function isPermanent(err: unknown): boolean {
  return err instanceof ChatopsError && (err.code === 'SSH_HOST_KEY_REFUSED' || err.code === 'CONFIG_INVALID');
}
