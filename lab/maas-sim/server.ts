/**
 * A MAAS 2.0 region API over real HTTP on loopback: verifies OAuth like MAAS, enforces MAAS's
 * state rules, records every call, and can be told to be slow or to fail.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyOAuth } from './oauth-verify.ts';
import { API_PATH } from './render.ts';
import { configureDhcp } from './dhcp.ts';
import { route } from './router.ts';
import { scenario as normaliseScenario, type MaasScenario } from './scenario.ts';
import { advanceCommissioning } from './machines.ts';
import { simVersion } from './interfaces.ts';
import { ok, type SimContext, type SimRequest, type SimResponse, type SimRules, type SimTiming } from './sim-http.ts';

export interface MaasSimCall {
  method: string;
  /** The URL path, e.g. `/MAAS/api/2.0/machines/`. */
  path: string;
  /** `op` from the query string or the form. */
  op?: string;
  query: Record<string, string[]>;
  form: Record<string, string[]>;
  /** The status answered; 0 while the answer is pending or when the connection was dropped. */
  status: number;
}

export interface MaasFault {
  /** Answer with this status instead (body: its reason phrase, or `body`). */
  status?: number;
  /** The body sent with `status`: a string as text/plain, anything else as JSON (a MAAS error echoing what it was sent). */
  body?: unknown;
  /** Destroy the connection without answering. */
  drop?: boolean;
  /** How many matching requests get the fault. */
  count: number;
  /** Tested against the path with its query (`/MAAS/api/2.0/machines/?op=power_parameters`); absent = every request. */
  path?: RegExp;
}

export interface MaasSimulatorOptions {
  scenario: MaasScenario;
  /** The keys (`consumer_key:token_key:token_secret`) it accepts, all belonging to `scenario.user`. */
  apiKeys: string[];
  /** Loopback only; default 127.0.0.1. */
  host?: string;
  port?: number;
  latencyMs?: number;
  rules?: Partial<SimRules>;
  /** How long commissioning takes and MAAS's node_timeout (defaults: 0 ms, 30 minutes, status monitor on). */
  timing?: Partial<SimTiming>;
  /** MAAS's clock in ms (default Date.now): a test's fake clock lets MAAS's 30 minutes pass at once. */
  clock?: () => number;
}

export interface MaasSimulator {
  /** `http://127.0.0.1:<port>/MAAS`, what a config's maas.<region>.url holds. */
  url: string;
  calls: MaasSimCall[];
  /** The live scenario (a normalised deep copy of the one given): change it between calls. */
  state: MaasScenario;
  /** TCP connections accepted so far: shows whether a client keeps connections alive. */
  readonly connections: number;
  injectFaults(fault: MaasFault): void;
  /** Drops every fault not yet served. */
  clearFaults(): void;
  setLatency(ms: number): void;
  resetCalls(): void;
  close(): Promise<void>;
}

export async function startMaasSimulator(options: MaasSimulatorOptions): Promise<MaasSimulator> {
  const host = options.host ?? '127.0.0.1';
  if (!/^127\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`the MAAS simulator listens on loopback only, not ${host}`);
  const ctx: SimContext = {
    state: normaliseScenario(options.scenario),
    rules: { subnetOmittedFlags: 'keep', ...options.rules },
    timing: { commissioningMs: 0, nodeTimeoutMinutes: 30, statusMonitor: true, ...options.timing },
    now: options.clock ?? Date.now,
  };
  configureDhcp(ctx.state);
  const calls: MaasSimCall[] = [];
  const faults: MaasFault[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let latencyMs = options.latencyMs ?? 0;

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function takeFault(pathWithQuery: string): MaasFault | undefined {
    const fault = faults.find((f) => f.count > 0 && (!f.path || f.path.test(pathWithQuery)));
    if (fault) fault.count -= 1;
    return fault;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? host}`);
    const isForm = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
    const form = new URLSearchParams(isForm ? body : '');
    const method = req.method ?? 'GET';
    const op = url.searchParams.get('op') ?? form.get('op') ?? undefined;
    const call: MaasSimCall = { method, path: url.pathname, query: toRecord(url.searchParams), form: toRecord(form), status: 0 };
    if (op !== undefined) call.op = op;
    calls.push(call);

    if (latencyMs > 0) await wait(latencyMs);
    const fault = takeFault(url.pathname + url.search);
    if (fault?.drop) {
      req.socket.destroy();
      return;
    }
    const answer: SimResponse = fault?.status
      ? faultAnswer(fault.status, fault.body)
      : answerApi(ctx, options.apiKeys, { method, url, form, op, authorization: req.headers.authorization });
    call.status = answer.status;
    send(res, answer);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { status: 500, text: `simulator error: ${String(err)}` });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });

  return {
    url: `http://${host}:${port}/MAAS`,
    calls,
    state: ctx.state,
    get connections() {
      return connections;
    },
    clearFaults() {
      faults.splice(0);
    },
    injectFaults(fault) {
      faults.push({ ...fault });
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    resetCalls() {
      calls.length = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function answerApi(
  ctx: SimContext,
  apiKeys: string[],
  r: { method: string; url: URL; form: URLSearchParams; op: string | undefined; authorization: string | undefined },
): SimResponse {
  if (!r.url.pathname.startsWith(API_PATH)) return { status: 404, text: 'Not Found' };
  // api/version.py VersionHandler is an AnonymousOperationsHandler.
  if (r.url.pathname === `${API_PATH}version/` && r.method === 'GET') {
    return ok({ capabilities: ['networks-management', 'static-ipaddresses', 'authenticate-api'], version: simVersion(ctx), subversion: '' });
  }
  const auth = verifyOAuth(
    { method: r.method, baseUrl: `${r.url.protocol}//${r.url.host}${r.url.pathname}`, query: r.url.searchParams, form: r.form, authorization: r.authorization },
    apiKeys,
  );
  if (!auth.ok) return { status: auth.status, text: auth.message };
  const request: SimRequest = {
    method: r.method,
    segments: r.url.pathname.slice(API_PATH.length).split('/'),
    query: r.url.searchParams,
    form: r.form,
    op: r.op,
  };
  advanceCommissioning(ctx);
  return route(ctx, request);
}

function faultAnswer(status: number, body: unknown): SimResponse {
  if (body === undefined) return { status, text: STATUS_CODES[status] ?? 'Error' };
  return typeof body === 'string' ? { status, text: body } : { status, json: body };
}

function send(res: ServerResponse, answer: SimResponse): void {
  if (answer.json !== undefined) {
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(answer.json));
  } else {
    res.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(answer.text ?? '');
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function toRecord(params: URLSearchParams): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of params) (out[key] ??= []).push(value);
  return out;
}
