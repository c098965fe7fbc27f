import { jitteredBackoffMs } from '../../core/jittered-backoff.ts';
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';

/**
 * One informer (client-node's ListWatch: list, then watch from the list's resourceVersion) kept
 * alive. client-node handles 410 Gone (it lists again) and reconnects a watch its inactivity timer
 * cut; on any other error it stops for good and leaves the restart to the caller
 * (kubernetes-client/javascript#795, #1933). So this:
 *  - asks for bookmarks (allowWatchBookmarks), so a quiet but healthy watch still says so;
 *  - drops a watch that sent nothing, not even a bookmark, for `silentAfterMs` and opens another
 *    (the watch that "goes silent after an hour", kubernetes-client/javascript#596, #958);
 *  - restarts after an error with exponential backoff and jitter, never in a tight loop;
 *  - lists afresh every `relistEveryMs`, whatever the watch says;
 *  - keeps its health for /readyz and the metrics.
 */

export type WatchState = 'starting' | 'watching' | 'backing-off' | 'stopped';
export type RestartReason = 'error' | 'silent' | 'gone' | 'relist';

export interface WatchHealth {
  state: WatchState;
  /** A watch is open, has not failed since it last delivered, and was heard from (event, bookmark or list) within silentAfterMs. */
  healthy: boolean;
  lastHeardAt: number | null;
  lastListAt: number | null;
  restarts: Record<RestartReason, number>;
  /** The last error's first line (no credential: client-node's messages carry none of ours). */
  lastError: string | null;
}

export interface ResourceWatchOptions<T extends KubernetesObject> {
  kubeConfig: KubeConfig;
  /** The collection's API path, e.g. /apis/<group>/<version>/namespaces/<ns>/<plural>. */
  path: string;
  labelSelector?: string;
  list: () => Promise<KubernetesListObject<T>>;
  /** Called after each event, and after each list once its objects are in the cache. */
  onChange: () => void;
  silentAfterMs?: number;
  relistEveryMs?: number;
  /** Server-side timeoutSeconds of each watch request. */
  watchTimeoutSeconds?: number;
  backoff?: { baseMs: number; maxMs: number };
  onRestart?: (reason: RestartReason) => void;
  onError?: (err: unknown) => void;
  now?: () => number;
  random?: () => number;
  /** How a backoff waits; tests record the delays. */
  sleep?: (ms: number) => Promise<void>;
}

export const WATCH_DEFAULTS = {
  silentAfterMs: 150_000,
  relistEveryMs: 15 * 60_000,
  watchTimeoutSeconds: 300,
  backoff: { baseMs: 1_000, maxMs: 60_000 },
} as const;

export class ResourceWatch<T extends KubernetesObject> {
  readonly #o: ResourceWatchOptions<T>;
  readonly #now: () => number;
  #informer: ListWatch<T> | undefined;
  #generation = 0;
  #state: WatchState = 'stopped';
  #synced = false;
  #failures = 0;
  #lastHeardAt: number | null = null;
  #lastListAt: number | null = null;
  #lastError: string | null = null;
  #relistTimer: NodeJS.Timeout | undefined;
  readonly #restarts: Record<RestartReason, number> = { error: 0, silent: 0, gone: 0, relist: 0 };

  constructor(options: ResourceWatchOptions<T>) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  start(): void {
    if (this.#state !== 'stopped') return;
    this.#launch();
    const every = this.#o.relistEveryMs ?? WATCH_DEFAULTS.relistEveryMs;
    this.#relistTimer = setInterval(() => this.#restart('relist'), every);
    this.#relistTimer.unref();
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    this.#generation++;
    clearInterval(this.#relistTimer);
    const informer = this.#informer;
    this.#informer = undefined;
    await informer?.stop();
  }

  /** The objects as last listed and watched; empty until the first list. */
  objects(): readonly T[] {
    return this.#informer?.list() ?? [];
  }

  /** The current informer has listed at least once: objects() is a whole picture. */
  get synced(): boolean {
    return this.#synced;
  }

  health(): WatchHealth {
    const silentAfter = this.#o.silentAfterMs ?? WATCH_DEFAULTS.silentAfterMs;
    const heard = this.#lastHeardAt !== null && this.#now() - this.#lastHeardAt <= silentAfter;
    return {
      state: this.#state,
      // A watch that keeps failing right after each list is not watching, whatever its state says.
      healthy: this.#state === 'watching' && heard && this.#failures === 0,
      lastHeardAt: this.#lastHeardAt,
      lastListAt: this.#lastListAt,
      restarts: { ...this.#restarts },
      lastError: this.#lastError,
    };
  }

  #launch(): void {
    const generation = ++this.#generation;
    const current = () => generation === this.#generation;
    this.#state = 'starting';
    this.#synced = false;
    const watch = new HeardWatch(this.#o.kubeConfig, {
      silentAfterMs: this.#o.silentAfterMs ?? WATCH_DEFAULTS.silentAfterMs,
      timeoutSeconds: this.#o.watchTimeoutSeconds ?? WATCH_DEFAULTS.watchTimeoutSeconds,
      onOpen: () => current() && (this.#state = 'watching'),
      onHeard: () => current() && this.#heard(),
      onEnd: (reason) => current() && this.#ended(reason),
    });
    const list = async () => {
      const answer = await this.#o.list();
      if (current()) {
        this.#lastListAt = this.#now();
        this.#lastHeardAt = this.#lastListAt;
        // ListWatch fills its cache from this list right after the await: look once it has.
        setImmediate(() => {
          if (!current()) return;
          this.#synced = true;
          this.#o.onChange();
        });
      }
      return answer;
    };
    const informer = new ListWatch<T>(this.#o.path, watch, list, false, this.#o.labelSelector);
    const changed = () => current() && this.#synced && this.#o.onChange();
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    informer.on('error', (err: unknown) => current() && this.#failed(err));
    this.#informer = informer;
    informer.start().catch((err: unknown) => current() && this.#failed(err));
  }

  /** An event or a bookmark: the watch works, so the next failure starts the backoff afresh. */
  #heard(): void {
    this.#lastHeardAt = this.#now();
    this.#failures = 0;
  }

  /** A watch request ended; ListWatch reconnects on its own (from the last resourceVersion, or with a list after a 410). */
  #ended(reason: 'silent' | 'gone' | 'closed'): void {
    if (reason === 'closed') {
      this.#failures = 0;
      return;
    }
    this.#restarts[reason]++;
    this.#o.onRestart?.(reason);
  }

  #failed(err: unknown): void {
    if (this.#state === 'stopped') return;
    this.#lastError = firstLine(err);
    this.#o.onError?.(err);
    this.#failures++;
    const delay = jitteredBackoffMs(this.#failures, this.#o.backoff ?? WATCH_DEFAULTS.backoff, this.#o.random);
    this.#state = 'backing-off';
    const generation = ++this.#generation;
    void this.#informer?.stop();
    const sleep = this.#o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
    void sleep(delay).then(() => {
      if (generation !== this.#generation || this.#state === 'stopped') return;
      this.#restarts.error++;
      this.#o.onRestart?.('error');
      this.#launch();
    });
  }

  #restart(reason: RestartReason): void {
    if (this.#state === 'stopped' || this.#state === 'backing-off') return;
    this.#restarts[reason]++;
    this.#o.onRestart?.(reason);
    void this.#informer?.stop();
    this.#launch();
  }
}

interface HeardWatchHooks {
  silentAfterMs: number;
  timeoutSeconds: number;
  onOpen: () => void;
  onHeard: () => void;
  onEnd: (reason: 'silent' | 'gone' | 'closed') => void;
}

/** client-node's Watch, asking for bookmarks and saying when it hears anything and why it ended. */
class HeardWatch extends Watch {
  readonly #hooks: HeardWatchHooks;

  constructor(kubeConfig: KubeConfig, hooks: HeardWatchHooks) {
    super(kubeConfig);
    this.#hooks = hooks;
    // Watch's own inactivity timer (private in its typings, 30 s by default): it aborts a watch
    // that sends no byte for this long, and ListWatch then reconnects from the last resourceVersion.
    (this as unknown as { requestTimeoutMs: number }).requestTimeoutMs = hooks.silentAfterMs;
  }

  override watch(
    path: string,
    queryParams: Record<string, unknown>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    let gone = false;
    const query = { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.#hooks.timeoutSeconds };
    const onEvent = (phase: string, apiObj: unknown, watchObj?: unknown) => {
      if (phase === 'ERROR' && (apiObj as { code?: unknown } | undefined)?.code === 410) gone = true;
      else this.#hooks.onHeard();
      callback(phase, apiObj, watchObj);
    };
    const onDone = (err: unknown) => {
      const status = (err as { statusCode?: unknown } | null)?.statusCode;
      if (err && (err as { name?: unknown }).name === 'TimeoutError') this.#hooks.onEnd('silent');
      else if (gone || status === 410) this.#hooks.onEnd('gone');
      else if (!err) this.#hooks.onEnd('closed');
      done(err);
    };
    this.#hooks.onOpen();
    return super.watch(path, query, onEvent, onDone);
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n')[0] ?? '').slice(0, 200);
}
