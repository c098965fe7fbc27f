import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, interceptors, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { retryOptionsFor, type RetryPolicy } from '../../../src/adapters/maas/retry.ts';

/*
 * The MAAS retry rules as undici's retry interceptor applies them, against a loopback server that
 * answers each request from a script and counts what arrives.
 */

interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Close the connection instead of answering. */
  drop?: boolean;
}

let server: Server;
let url: string;
let script: Answer[];
let arrivals: number[];
const agents: Agent[] = [];

beforeEach(async () => {
  script = [];
  arrivals = [];
  server = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    const answer = script.shift() ?? { status: 200 };
    if (answer.drop) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify({ status: answer.status }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/MAAS/api/2.0/machines/`;
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Every delay handed to setTimeout while it is watched; the timers still run as asked. */
function scheduledWaits(): { delays: number[]; restore(): void } {
  const delays: number[] = [];
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
    delays.push(ms ?? 0);
    return originalSetTimeout(fn, ms, ...rest);
  }) as typeof setTimeout);
  return { delays, restore: () => spy.mockRestore() };
}
const originalSetTimeout = globalThis.setTimeout;

const FAST: RetryPolicy = { retries: 2, backoffMs: 1, maxWaitMs: 50 };

/** Sends one request through the retry interceptor; the final status, or the transport error's code. */
async function send(method: 'GET' | 'PUT' | 'POST', policy: RetryPolicy = FAST): Promise<number | string> {
  const agent = new Agent();
  agents.push(agent);
  try {
    const response = await request(url, { method, body: method === 'GET' ? undefined : 'a=1', dispatcher: agent.compose(interceptors.retry(retryOptionsFor(method, policy))) });
    await response.body.text();
    return response.statusCode;
  } catch (err) {
    return String((err as { code?: unknown }).code);
  }
}

describe('MAAS retry rules (undici retry interceptor)', () => {
  it('GET: every 5xx is repeated, at most retries + 1 attempts, and the last answer comes back', async () => {
    script = [{ status: 502 }, { status: 501 }, { status: 500 }, { status: 200 }];
    expect(await send('GET')).toBe(500);
    expect(arrivals).toHaveLength(3);
  });

  it('GET: a 5xx burst shorter than the retries is ridden out', async () => {
    script = [{ status: 503 }, { status: 504 }];
    expect(await send('GET')).toBe(200);
    expect(arrivals).toHaveLength(3);
  });

  it.each(['GET', 'PUT', 'POST'] as const)('%s: a 4xx is not repeated', async (method) => {
    script = [{ status: 409 }];
    expect(await send(method)).toBe(409);
    expect(arrivals).toHaveLength(1);
  });

  it.each(['PUT', 'POST'] as const)('%s: a write is sent once, whatever the 5xx (the repair journal resolves it by reading)', async (method) => {
    script = [{ status: 503 }, { status: 200 }];
    expect(await send(method)).toBe(503);
    expect(arrivals).toHaveLength(1);
    arrivals = [];
    script = [{ status: 500 }, { status: 200 }];
    expect(await send(method)).toBe(500);
    expect(arrivals).toHaveLength(1);
  });

  it('a dropped connection is repeated for GET, never for a PUT or POST, which may have run', async () => {
    script = [{ status: 0, drop: true }];
    expect(await send('GET')).toBe(200);
    expect(arrivals).toHaveLength(2);
    arrivals = [];
    for (const method of ['PUT', 'POST'] as const) {
      arrivals = [];
      script = [{ status: 0, drop: true }];
      expect(await send(method)).toBe('UND_ERR_SOCKET');
      expect(arrivals).toHaveLength(1);
    }
  });

  it('retries: 0 makes one attempt', async () => {
    script = [{ status: 503 }];
    expect(await send('GET', { ...FAST, retries: 0 })).toBe(503);
    expect(arrivals).toHaveLength(1);
  });

  // The wait is read where it is scheduled, not timed: a test asserts what was asked for, never wall time.
  it('honours Retry-After over the backoff', async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' } }];
    const waits = scheduledWaits();
    try {
      expect(await send('GET', { retries: 1, backoffMs: 1, maxWaitMs: 10_000 })).toBe(200);
    } finally {
      waits.restore();
    }
    expect(arrivals).toHaveLength(2);
    expect(waits.delays).toContain(1000);
    expect(waits.delays).not.toContain(1);
  });

  it('caps a Retry-After longer than maxWaitMs: the call still ends after its attempts', async () => {
    script = [{ status: 503, headers: { 'retry-after': '3600' } }, { status: 503, headers: { 'retry-after': '3600' } }];
    expect(await send('GET', { retries: 2, backoffMs: 1, maxWaitMs: 20 })).toBe(200);
    expect(arrivals).toHaveLength(3);
  });
});
