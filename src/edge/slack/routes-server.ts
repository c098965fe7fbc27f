import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomRoute } from '@slack/bolt';

/**
 * In Socket Mode nothing arrives over HTTP from Slack, but /healthz, /readyz and /metrics must still
 * answer on PORT. Bolt's own server for this listens on every interface and hides its port, so we
 * serve the routes ourselves.
 */
export async function startRoutesServer(routes: readonly CustomRoute[], listen: { port: number; host?: string }): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = routes.find((r) => r.path === path && (Array.isArray(r.method) ? r.method : [r.method]).some((m) => m.toUpperCase() === method));
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    route.handler(Object.assign(req, { params: {} }), res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
