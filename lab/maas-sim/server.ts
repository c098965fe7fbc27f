/**
 * A MAAS 2.0 region API over real HTTP on loopback: verifies OAuth like MAAS, enforces MAAS's
 * state rules, records every call, and can be told to be slow or to fail.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nonceKey, parseAuthorization, verifyOAuth } from './oauth-verify.ts';
import { API_PATH } from './render.ts';
import { configureDhcp } from './dhcp.ts';
import { route } from './router.ts';
import { scenario as normaliseScenario, type MaasScenario } from './scenario.ts';
import { advanceCommissioning } from './machines.ts';
import { simVersion } from './interfaces.ts';
import { ok, text, type SimContext, type SimRequest, type SimResponse, type SimRules, type SimTiming } from './sim-http.ts';

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
  /** The request's oauth_nonce, when it was signed. */
  nonce?: string;
}

export interface MaasFault {
  /** Answer with this status instead (body: its reason phrase, or `body`). */
  status?: number;
  /** The body sent with `status`: a string as text/plain, anything else as JSON (a MAAS error echoing what it was sent). */
  body?: unknown;
  /** Destroy the connection without answering. */
  drop?: boolean;
  /** Carry the request out (state changed, nonce spent), then destroy the connection: the answer is lost. */
  dropAfterCommit?: boolean;
  /** How many matching requests get the fault. */
  count: number;
  /** Tested against the path with its query (`/MAAS/api/2.0/machines/?op=power_parameters`); absent = every request. */
  path?: RegExp;
  /** Only requests of this method (`PUT`); absent = any. */
  method?: string;
}

/** Another MAAS user, with keys of its own (the scenario's user holds `apiKeys`). */
export interface SimUser {
  username: string;
  isAdmin: boolean;
  apiKeys: string[];
}

export interface MaasSimulatorOptions {
  scenario: MaasScenario;
  /** The keys (`consumer_key:token_key:token_secret`) it accepts for `scenario.user`. */
  apiKeys: string[];
  /** Other users and their keys: each request is answered as the user whose key signed it. */
  users?: SimUser[];
  /** Loopback only; default 127.0.0.1. */
  host?: string;
  port?: number;
  latencyMs?: number;
  rules?: Partial<SimRules>;
  /** How long commissioning takes and MAAS's node_timeout (defaults: 0 ms, 30 minutes, status monitor on). */
  timing?: Partial<SimTiming>;
  /** MAAS's clock in ms (default Date.now): a test's fake clock lets MAAS's 30 minutes pass at once. */
  clock?: () => number;
  /** How far the region's wall clock is from this host's (OAuth timestamps and the Date header), ms. Default 0. */
  wallClockOffsetMs?: number;
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
  /** Moves the region's wall clock (what OAuth timestamps are checked against and the Date header says). */
  setWallClockOffset(ms: number): void;
  resetCalls(): void;
  close(): Promise<void>;
}

export async function startMaasSimulator(options: MaasSimulatorOptions): Promise<MaasSimulator> {
  const host = options.host ?? '127.0.0.1';
  if (!/^127\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`the MAAS simulator listens on loopback only, not ${host}`);
  const state = normaliseScenario(options.scenario);
  const ctx: SimContext = {
    state,
    caller: { username: state.user, isAdmin: state.userIsAdmin !== false },
    rules: { subnetOmittedFlags: 'keep', ...options.rules },
    timing: { commissioningMs: 0, nodeTimeoutMinutes: 30, statusMonitor: true, ...options.timing },
    now: options.clock ?? Date.now,
  };
  configureDhcp(ctx.state);
  const calls: MaasSimCall[] = [];
  const faults: MaasFault[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let latencyMs = options.latencyMs ?? 0;
  let wallClockOffsetMs = options.wallClockOffsetMs ?? 0;
  const spentNonces = new Set<string>();
  const keys: KeyTable = {
    all: [...options.apiKeys, ...(options.users ?? []).flatMap((u) => u.apiKeys)],
    userOf: (consumerKey) => options.users?.find((u) => u.apiKeys.some((k) => k.split(':')[0] === consumerKey)),
  };

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  function takeFault(method: string, pathWithQuery: string): MaasFault | undefined {
    const fault = faults.find((f) => f.count > 0 && (!f.method || f.method === method) && (!f.path || f.path.test(pathWithQuery)));
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
    const nonce = parseAuthorization(req.headers.authorization)?.oauth_nonce;
    if (nonce !== undefined) call.nonce = nonce;
    calls.push(call);

    if (latencyMs > 0) await wait(latencyMs);
    const fault = takeFault(method, url.pathname + url.search);
    if (fault?.drop) {
      req.socket.destroy();
      return;
    }
    const wallNow = Date.now() + wallClockOffsetMs;
    const answered = fault?.status && !fault.dropAfterCommit
      ? { answer: faultAnswer(fault.status, fault.body) }
      : answerApi(ctx, keys, { method, url, form, op, authorization: req.headers.authorization, nowS: wallNow / 1000, spentNonces });
    // piston3 stores the nonce in the request's transaction: a request that ended in an error rolled it back (rows 403-attempt-2-same-header, 500-attempt-2-same-header).
    if (answered.nonce && answered.answer.status < 400) spentNonces.add(answered.nonce);
    if (fault?.dropAfterCommit) {
      req.socket.destroy();
      return;
    }
    call.status = answered.answer.status;
    send(res, answered.answer, new Date(wallNow));
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { status: 500, text: `simulator error: ${String(err)}` }, new Date());
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
    setWallClockOffset(ms) {
      wallClockOffsetMs = ms;
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

interface KeyTable {
  all: string[];
  /** The other user a consumer key belongs to; undefined: the scenario's user. */
  userOf: (consumerKey: string) => SimUser | undefined;
}

interface ApiRequest {
  method: string;
  url: URL;
  form: URLSearchParams;
  op: string | undefined;
  authorization: string | undefined;
  nowS: number;
  spentNonces: ReadonlySet<string>;
}

function answerApi(ctx: SimContext, keys: KeyTable, r: ApiRequest): { answer: SimResponse; nonce?: string } {
  if (!r.url.pathname.startsWith(API_PATH)) return { answer: { status: 404, text: 'Not Found' } };
  // api/version.py VersionHandler is an AnonymousOperationsHandler.
  if (r.url.pathname === `${API_PATH}version/` && r.method === 'GET') {
    return { answer: ok({ capabilities: ['networks-management', 'static-ipaddresses', 'authenticate-api'], version: simVersion(ctx), subversion: '' }) };
  }
  if (r.authorization === undefined) return { answer: anonymousAnswer(r) };
  const auth = verifyOAuth(
    { method: r.method, baseUrl: `${r.url.protocol}//${r.url.host}${r.url.pathname}`, query: r.url.searchParams, form: r.form, authorization: r.authorization },
    keys.all,
    { nowS: r.nowS, spentNonces: r.spentNonces },
  );
  if (!auth.ok) return { answer: { status: auth.status, text: auth.message, contentType: 'text/html; charset=utf-8' } };
  const other = keys.userOf(auth.consumerKey);
  const caller = other ? { username: other.username, isAdmin: other.isAdmin } : { username: ctx.state.user, isAdmin: ctx.state.userIsAdmin !== false };
  const request: SimRequest = {
    method: r.method,
    segments: r.url.pathname.slice(API_PATH.length).split('/'),
    query: r.url.searchParams,
    form: r.form,
    op: r.op,
  };
  advanceCommissioning(ctx);
  return { answer: route({ ...ctx, caller }, request), nonce: nonceKey(auth) };
}

/**
 * No Authorization header: machines/ has an anonymous handler without `read` (api/machines.py
 * AnonMachinesHandler), so a GET is piston's 400 "Unrecognised signature"; elsewhere
 * MAASAPIAuthentication.challenge answers rc.FORBIDDEN, a 401 "Forbidden" (rows machines-anon, whoami).
 */
function anonymousAnswer(r: ApiRequest): SimResponse {
  if (r.url.pathname === `${API_PATH}machines/`) return text(400, `Unrecognised signature: method=${r.method} op=${r.op ?? 'None'}`);
  return { status: 401, text: 'Forbidden', contentType: 'text/plain' };
}

function faultAnswer(status: number, body: unknown): SimResponse {
  if (body === undefined) return { status, text: STATUS_CODES[status] ?? 'Error' };
  return typeof body === 'string' ? { status, text: body } : { status, json: body };
}

function send(res: ServerResponse, answer: SimResponse, date: Date): void {
  res.setHeader('date', date.toUTCString());
  if (answer.json !== undefined) {
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
    // MAAS's emitter indents answers by four (the recorded ones are that size: about 13 KB a
    // machine); a validation error is Python's json.dumps, on one line (row machines-filter).
    res.end(answer.status < 300 ? JSON.stringify(answer.json, null, 4) : pythonJson(answer.json));
  } else {
    res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'text/plain; charset=utf-8' });
    res.end(answer.text ?? '');
  }
}

/** json.dumps with Python's default separators (", " and ": "). */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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
