import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * Slack's side of Socket Mode (https://docs.slack.dev/apis/events-api/using-socket-mode):
 * `apps.connections.open` hands out a one-time `wss://…/link/?ticket=…` URL; on connect Slack sends
 * `hello`, then envelopes `{ envelope_id, type, payload, accepts_response_payload }`; the app
 * answers each with `{ envelope_id, payload? }` within 3 seconds.
 */
export interface SocketModeHooks {
  onConnection(id: number): void;
  onClose(id: number): void;
  onAck(envelopeId: string, payload: Record<string, unknown> | undefined): void;
}

export interface Envelope {
  type: 'slash_commands' | 'interactive' | 'events_api';
  payload: Record<string, unknown>;
}

export class SocketModeServer {
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #tickets = new Set<string>();
  readonly #sockets = new Map<number, WebSocket>();
  readonly #waiters = new Map<string, (payload: Record<string, unknown> | undefined) => void>();
  readonly #hooks: SocketModeHooks;
  readonly #appId: string;
  #nextId = 1;
  #pinger: NodeJS.Timeout;

  constructor(hooks: SocketModeHooks, options: { appId: string; pingIntervalMs: number }) {
    this.#hooks = hooks;
    this.#appId = options.appId;
    this.#pinger = setInterval(() => {
      for (const ws of this.#sockets.values()) ws.ping(Buffer.from(`ping ${Date.now()}`));
    }, options.pingIntervalMs);
    this.#pinger.unref();
  }

  /** A one-time connection URL, as apps.connections.open returns it. */
  issueUrl(baseWsUrl: string): string {
    const ticket = randomUUID();
    this.#tickets.add(ticket);
    return `${baseWsUrl}/link/?ticket=${ticket}&app_id=${this.#appId}`;
  }

  get openConnections(): number {
    return this.#sockets.size;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const ticket = url.searchParams.get('ticket') ?? '';
    if (url.pathname !== '/link/' || !this.#tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n');
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws));
  }

  #accept(ws: WebSocket): void {
    const id = this.#nextId++;
    this.#sockets.set(id, ws);
    this.#hooks.onConnection(id);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      this.#receive(String(data));
    });
    ws.on('close', () => {
      this.#sockets.delete(id);
      this.#hooks.onClose(id);
    });
    ws.on('error', () => ws.terminate());
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.#sockets.size,
        debug_info: { host: 'emulator', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: this.#appId },
      }),
    );
  }

  #receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const { envelope_id: envelopeId, payload } = message as { envelope_id?: unknown; payload?: unknown };
    if (typeof envelopeId !== 'string') return;
    const body = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined;
    this.#hooks.onAck(envelopeId, body);
    this.#waiters.get(envelopeId)?.(body);
    this.#waiters.delete(envelopeId);
  }

  /** Sends an envelope on the newest connection; resolves with the ack, or `acked: false` after `ackTimeoutMs`. */
  async send(envelope: Envelope, ackTimeoutMs: number): Promise<{ envelopeId: string; acked: boolean; payload?: Record<string, unknown> }> {
    const ws = [...this.#sockets.values()].at(-1);
    if (!ws) throw new Error('no Socket Mode connection is open: start the app in socket mode first');
    const envelopeId = randomUUID();
    const acked = new Promise<{ acked: boolean; payload?: Record<string, unknown> }>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(envelopeId);
        resolve({ acked: false });
      }, ackTimeoutMs);
      this.#waiters.set(envelopeId, (payload) => {
        clearTimeout(timer);
        resolve(payload ? { acked: true, payload } : { acked: true });
      });
    });
    ws.send(JSON.stringify({ envelope_id: envelopeId, type: envelope.type, payload: envelope.payload, accepts_response_payload: envelope.type !== 'events_api' }));
    return { envelopeId, ...(await acked) };
  }

  /** Asks every connected app to reconnect, as Slack does before recycling a server. */
  disconnectAll(reason = 'refresh_requested'): void {
    for (const ws of this.#sockets.values()) ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'emulator' } }));
  }

  async close(): Promise<void> {
    clearInterval(this.#pinger);
    for (const ws of this.#sockets.values()) ws.terminate();
    this.#sockets.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
