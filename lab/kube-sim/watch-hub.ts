import type { ServerResponse } from 'node:http';
import type { KubeObjectMeta } from '../../src/adapters/kube/types.ts';
import { matchesLabelSelector, type Requirement } from './label-selector.ts';

/**
 * The watch half of the simulated API server (Kubernetes API concepts, "Efficient detection of
 * changes": https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
 * A watch is one chunked 200 response of newline-delimited `{"type","object"}` events:
 *  - from resourceVersion N it replays every retained event after N, then follows;
 *  - from "" or "0" it starts with a synthetic ADDED for every object ("start at any");
 *  - from an N older than the retained history it sends one ERROR event carrying a 410 Expired
 *    Status ("too old resource version") and ends: the client must list again;
 *  - with allowWatchBookmarks=true it sends BOOKMARK events, an object of the watched kind whose
 *    metadata carries only the current resourceVersion (KEP-956);
 *  - timeoutSeconds ends the stream after that many seconds.
 * A "silent" watch models a dead path in between: the connection stays open and nothing arrives.
 */

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  resource: string;
  namespace: string;
  type: WatchEventType;
  object: { metadata: KubeObjectMeta };
}

export interface WatchRequest {
  resource: string;
  namespace: string;
  kind: string;
  apiVersion: string;
  selector: Requirement[];
  resourceVersion: string;
  bookmarks: boolean;
  timeoutSeconds: number | null;
  /** The objects as they are now, for a watch that starts at "" or "0". */
  current: () => { metadata: KubeObjectMeta }[];
}

interface OpenWatch {
  request: WatchRequest;
  res: ServerResponse;
  silent: boolean;
  timers: NodeJS.Timeout[];
  /** The last split event's writes (splitEvents). */
  tail: Promise<void>;
}

export class WatchHub {
  readonly #events: StoredEvent[] = [];
  readonly #open = new Set<OpenWatch>();
  /** Events at or below this resourceVersion are gone (compacted). */
  #compactedTo = 0;
  /** Bookmarks every this many ms on watches that asked for them (the API server sends about one a minute). */
  bookmarkIntervalMs = 60_000;
  /** While true, watches opened (and those open) deliver nothing. */
  silent = false;
  /** While true, each event goes out as two writes (two chunks) a few ms apart, split inside its JSON. */
  splitEvents = false;
  /** Events written so far, over every watch (bookmarks and errors included). */
  eventsSent = 0;

  constructor(private readonly currentRv: () => number) {}

  get openCount(): number {
    return [...this.#open].filter((w) => !w.res.writableEnded).length;
  }

  record(event: StoredEvent): void {
    this.#events.push(event);
    for (const w of this.#open) {
      if (w.request.resource === event.resource && w.request.namespace === event.namespace) this.#deliver(w, event);
    }
  }

  /** Drops the history: any watch from an older resourceVersion now gets 410 Gone. */
  compact(): void {
    this.#compactedTo = this.currentRv();
    this.#events.splice(0);
  }

  /** Makes every open watch go quiet for good, as a half-dead connection would. */
  silenceOpen(): void {
    for (const w of this.#open) w.silent = true;
  }

  serve(request: WatchRequest, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    res.flushHeaders();
    const watch: OpenWatch = { request, res, silent: this.silent, timers: [], tail: Promise.resolve() };
    this.#open.add(watch);
    res.on('close', () => this.#drop(watch));
    const from = request.resourceVersion;
    if (from === '' || from === '0') {
      for (const object of request.current()) this.#send(watch, 'ADDED', object);
    } else {
      const rv = Number(from);
      if (!Number.isInteger(rv) || rv < this.#compactedTo) {
        this.#send(watch, 'ERROR', expired(from, this.#compactedTo));
        this.#end(watch);
        return;
      }
      for (const event of this.#events) {
        if (event.rv > rv && event.resource === request.resource && event.namespace === request.namespace) this.#deliver(watch, event);
      }
    }
    if (request.bookmarks) {
      const t = setInterval(() => this.#bookmark(watch), this.bookmarkIntervalMs);
      watch.timers.push(t);
    }
    if (request.timeoutSeconds !== null) watch.timers.push(setTimeout(() => this.#end(watch), request.timeoutSeconds * 1000));
  }

  closeAll(): void {
    for (const w of [...this.#open]) this.#end(w);
  }

  #deliver(watch: OpenWatch, event: StoredEvent): void {
    if (!matchesLabelSelector(event.object.metadata.labels ?? {}, watch.request.selector)) return;
    this.#send(watch, event.type, event.object);
  }

  #bookmark(watch: OpenWatch): void {
    const { kind, apiVersion } = watch.request;
    this.#send(watch, 'BOOKMARK', { kind, apiVersion, metadata: { resourceVersion: String(this.currentRv()) } });
  }

  #send(watch: OpenWatch, type: string, object: unknown): void {
    if (watch.silent || watch.res.writableEnded) return;
    const { kind, apiVersion } = watch.request;
    const served = type === 'ERROR' || type === 'BOOKMARK' ? object : { apiVersion, kind, ...structuredClone(object as object) };
    const line = `${JSON.stringify({ type, object: served })}\n`;
    this.eventsSent++;
    if (!this.splitEvents) {
      watch.res.write(line);
      return;
    }
    // Chained, so that an event sent meanwhile does not land between the two halves.
    const half = Math.floor(line.length / 2);
    watch.tail = watch.tail.then(async () => {
      for (const part of [line.slice(0, half), line.slice(half)]) {
        if (watch.res.writableEnded) return;
        watch.res.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  }

  #end(watch: OpenWatch): void {
    this.#drop(watch);
    if (!watch.res.writableEnded) watch.res.end();
  }

  #drop(watch: OpenWatch): void {
    for (const t of watch.timers) clearTimeout(t);
    this.#open.delete(watch);
  }
}

/** The Status the watch cache sends for a resourceVersion it no longer holds (apiserver storage/cacher, errors.NewResourceExpired). */
function expired(from: string, oldest: number): unknown {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${from} (${oldest})`,
    reason: 'Expired',
    code: 410,
  };
}
