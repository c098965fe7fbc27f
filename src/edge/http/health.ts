import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { match } from 'path-to-regexp';
import type { Registry } from 'prom-client';

/*
 * /healthz, /readyz and /metrics as plain node:http handlers. The route list has the shape of
 * Bolt's CustomRoute, so the same list goes to the Bolt receiver (bot, serve) or to
 * startHealthServer (worker, and Socket Mode where Bolt serves no HTTP).
 */

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Route {
  /** A path-to-regexp pattern, as Bolt's receiver reads it: `/healthz`, or `/admin/queues{/*rest}` for a subtree. */
  path: string;
  method: string | string[];
  handler: RouteHandler;
}

export interface ReadinessChecks {
  /** Redis answers PING. */
  redis: () => Promise<boolean>;
  /** The config was loaded and validated. */
  config: () => boolean;
  /** Slack is connected (auth.test passed, socket open); absent in the worker role. */
  slack?: () => boolean;
}

export interface HealthRouteOptions {
  checks: ReadinessChecks;
  /** Served at /metrics; absent = no /metrics route. */
  registry?: Pick<Registry, 'metrics' | 'contentType'>;
  /** A check that takes longer than this counts as failed. Default 2000 ms. */
  checkTimeoutMs?: number;
  /** More for /readyz's body that does not decide readiness (the management-cluster watch's health). */
  detail?: () => Record<string, unknown> | undefined;
}

const NO_STORE = { 'cache-control': 'no-store' };

export function healthzHandler(): RouteHandler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', ...NO_STORE }).end('ok\n');
  };
}

export interface ReadinessResult {
  ready: boolean;
  checks: Record<string, boolean>;
  failed: string[];
}

/** Runs every check at once; a check that throws or times out is false. */
export async function runReadinessChecks(checks: ReadinessChecks, timeoutMs = 2_000): Promise<ReadinessResult> {
  const entries = Object.entries(checks).filter(([, check]) => typeof check === 'function') as [string, () => boolean | Promise<boolean>][];
  const results = await Promise.all(entries.map(async ([name, check]) => [name, await passes(check, timeoutMs)] as const));
  const failed = results.filter(([, ok]) => !ok).map(([name]) => name);
  return { ready: failed.length === 0, checks: Object.fromEntries(results), failed };
}

export function readyzHandler(checks: ReadinessChecks, timeoutMs = 2_000, detail?: HealthRouteOptions['detail']): RouteHandler {
  return (_req, res) => {
    void runReadinessChecks(checks, timeoutMs).then((result) => {
      const extra = readDetail(detail);
      const body = result.ready
        ? { status: 'ready', checks: result.checks, ...extra }
        : { status: 'not ready', checks: result.checks, failed: result.failed, ...extra };
      sendJson(res, result.ready ? 200 : 503, body);
    });
  };
}

/** A detail that throws leaves the answer as it was: readiness is what the checks say. */
function readDetail(detail: HealthRouteOptions['detail']): { detail?: Record<string, unknown> } {
  try {
    const value = detail?.();
    return value ? { detail: value } : {};
  } catch {
    return {};
  }
}

export function metricsHandler(registry: Pick<Registry, 'metrics' | 'contentType'>): RouteHandler {
  return (_req, res) => {
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType, ...NO_STORE }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics could not be collected\n'),
    );
  };
}

/** GET /healthz, /readyz and (with a registry) /metrics. */
export function healthRoutes(options: HealthRouteOptions): Route[] {
  const routes: Route[] = [
    { path: '/healthz', method: ['GET', 'HEAD'], handler: healthzHandler() },
    { path: '/readyz', method: ['GET', 'HEAD'], handler: readyzHandler(options.checks, options.checkTimeoutMs, options.detail) },
  ];
  if (options.registry) routes.push({ path: '/metrics', method: ['GET'], handler: metricsHandler(options.registry) });
  return routes;
}

/** One request handler over a route list: 404 for an unknown path, 405 for a known path and another method. */
export function routeRequest(routes: readonly Route[]): RouteHandler {
  const matchers = routes.map((route) => ({ route, matches: match(route.path, { decode: decodeURIComponent }) }));
  return (req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const onPath = matchers.filter((m) => pathMatches(m.matches, path)).map((m) => m.route);
    const route = onPath.find((r) => methodsOf(r).includes(method));
    if (route) {
      try {
        route.handler(req, res);
      } catch {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
      }
      return;
    }
    if (onPath.length) {
      res.writeHead(405, { allow: [...new Set(onPath.flatMap(methodsOf))].join(', '), 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
  };
}

export interface HealthServer {
  server: Server;
  /** The port listened on (the real one when asked for 0). */
  port: number;
  close(): Promise<void>;
}

/** For roles without a Bolt HTTP server (worker, Socket Mode). host absent = every interface. */
export async function startHealthServer(options: { port: number; host?: string; routes: readonly Route[] }): Promise<HealthServer> {
  const server = createServer(routeRequest(options.routes));
  // Kubelet probes open a connection per probe; do not keep idle ones around for long.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A malformed escape (`%zz`) matches nothing rather than failing the request. */
function pathMatches(matches: (path: string) => unknown, path: string): boolean {
  try {
    return Boolean(matches(path));
  } catch {
    return false;
  }
}

function methodsOf(route: Route): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
}

async function passes(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    return (await Promise.race([Promise.resolve().then(check), timeout])) === true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...NO_STORE }).end(`${JSON.stringify(body)}\n`);
}
