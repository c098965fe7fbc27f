import type { CustomRoute } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { healthRoutes, startHealthServer, type HealthServer, type ReadinessChecks, type Route } from '../../src/edge/http/health.ts';
import { createMetrics } from '../../src/engine/metrics.ts';
import { createRedis, pingRedis } from '../../src/engine/queue/redis-connection.ts';
import { closeServer, startRoutesServer } from '../../src/edge/slack/routes-server.ts';
import { TEST_REDIS_URL } from '../helpers/redis.ts';

const servers: HealthServer[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function serve(routes: Route[]): Promise<string> {
  const server = await startHealthServer({ port: 0, host: '127.0.0.1', routes });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const allGood: ReadinessChecks = { redis: async () => true, config: () => true, slack: () => true };

describe('health endpoints over HTTP', () => {
  it('/healthz answers 200 ok', async () => {
    const base = await serve(healthRoutes({ checks: allGood }));
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok\n');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('/readyz answers 200 with each check when all pass', async () => {
    const base = await serve(healthRoutes({ checks: allGood }));
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'ready', checks: { redis: true, config: true, slack: true } });
  });

  it('/readyz answers 503 naming the checks that failed, threw or hung', async () => {
    let slackCalls = 0;
    const checks: ReadinessChecks = {
      redis: () => new Promise<boolean>(() => undefined),
      config: () => {
        throw new Error('not loaded');
      },
      slack: () => {
        slackCalls += 1;
        return true;
      },
    };
    const base = await serve(healthRoutes({ checks, checkTimeoutMs: 100 }));
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; checks: Record<string, boolean>; failed: string[] };
    expect(body).toEqual({ status: 'not ready', checks: { redis: false, config: false, slack: true }, failed: ['redis', 'config'] });
    expect(slackCalls).toBe(1);
  });

  it('/readyz without a slack check (the worker role) reports only redis and config', async () => {
    const base = await serve(healthRoutes({ checks: { redis: async () => true, config: () => true } }));
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', checks: { redis: true, config: true } });
  });

  it('/readyz pings a real Redis, and fails when Redis is not there', async () => {
    const live = createRedis(TEST_REDIS_URL, 'producer');
    const dead = createRedis('redis://127.0.0.1:1', 'producer');
    dead.on('error', () => undefined);
    cleanups.push(() => live.disconnect(), () => dead.disconnect());
    const up = await serve(healthRoutes({ checks: { redis: () => pingRedis(live), config: () => true } }));
    const down = await serve(healthRoutes({ checks: { redis: () => pingRedis(dead, 300), config: () => true } }));
    expect((await fetch(`${up}/readyz`)).status).toBe(200);
    const res = await fetch(`${down}/readyz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { failed: string[] }).failed).toEqual(['redis']);
  });

  it('/metrics serves the registry text with the Prometheus content type', async () => {
    const metrics = createMetrics({ defaultMetrics: false, commandNames: ['dns-check'], queueDepths: async () => ({ 'maas-dns-check': 2 }) });
    metrics.recordCommand('dns-check', 'accepted');
    const base = await serve(healthRoutes({ checks: allGood, registry: metrics.registry }));
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(metrics.contentType);
    const text = await res.text();
    expect(text).toContain('maas_chatops_commands_total{subcommand="dns-check",outcome="accepted"} 1');
    expect(text).toContain('maas_chatops_queue_depth{queue="maas-dns-check"} 2');
  });

  it('has no /metrics route without a registry', async () => {
    const base = await serve(healthRoutes({ checks: allGood }));
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });

  it('answers 404 for an unknown path and 405 for another method', async () => {
    const base = await serve(healthRoutes({ checks: allGood }));
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${base}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers 500 when a handler throws, and keeps serving', async () => {
    const base = await serve([
      ...healthRoutes({ checks: allGood }),
      {
        path: '/boom',
        method: 'GET',
        handler: () => {
          throw new Error('boom');
        },
      },
    ]);
    expect((await fetch(`${base}/boom`)).status).toBe(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('closes: the port stops answering', async () => {
    const server = await startHealthServer({ port: 0, host: '127.0.0.1', routes: healthRoutes({ checks: allGood }) });
    const url = `http://127.0.0.1:${server.port}/healthz`;
    expect((await fetch(url)).status).toBe(200);
    await server.close();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('the route list is a Bolt CustomRoute list: it runs on the Bolt-side routes server too', async () => {
    const routes: CustomRoute[] = healthRoutes({ checks: allGood });
    const started = await startRoutesServer(routes, { port: 0, host: '127.0.0.1' });
    cleanups.push(() => closeServer(started.server));
    const res = await fetch(`http://127.0.0.1:${started.port}/readyz`);
    expect(res.status).toBe(200);
  });
});
