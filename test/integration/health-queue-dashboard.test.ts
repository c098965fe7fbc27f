import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { createAuditLog } from '../../src/engine/audit/audit-log.ts';
import { startHealthServer, type HealthServer } from '../../src/edge/http/health.ts';
import { silentLogger } from '../../src/core/log.ts';
import { bullmqDepthSupplier } from '../../src/engine/metrics.ts';
import {
  DASHBOARD_JSON_PATH,
  DASHBOARD_PATH,
  DASHBOARD_ROUTE,
  dashboardAuthFromEnv,
  dashboardRoutesFromEnv,
  isAuthorized,
  type QueueView,
} from '../../src/edge/http/queue-dashboard.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

const CANARY = 'canary-Zq8vB2nK4wXy';

/** What Bull Board's API answers for one queue (the fields these tests read). */
interface BoardQueue {
  name: string;
  readOnlyMode: boolean;
  counts: Record<string, number>;
  jobs: { id: string; data: Record<string, string>; failedReason?: string; stacktrace: string[] }[];
}
const ENV = { DASHBOARD_USER: 'oncall', DASHBOARD_PASSWORD: 'correct horse battery staple' };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const GOOD = basic(ENV.DASHBOARD_USER, ENV.DASHBOARD_PASSWORD);

describe('queue dashboard over real Redis', () => {
  const prefix = freshPrefix('dash');
  let redis: Redis;
  let checks: Queue;
  let diffs: Queue;
  let server: HealthServer;
  let base: string;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    checks = new Queue('maas-dns-check', { connection: redis, prefix });
    diffs = new Queue('maas-mac-diff', { connection: redis, prefix });
    await checks.add('dns-check', { target: 'prod', requestedBy: 'U0OPS1', note: `key=${CANARY}` });
    await checks.add('dns-check', { target: '<img src=x onerror=alert(1)>', requestedBy: 'U0OPS2' });
    await checks.add('dns-check', { target: 'staging' }, { delay: 60 * 60 * 1000 });
    await diffs.add('mac-diff', { target: 'site-b', secretish: CANARY }, { attempts: 1 });
    await diffs.add('mac-diff', { target: 'site-c' }, { attempts: 1 });
    const workerConnection = redis.duplicate();
    const worker = new Worker(
      'maas-mac-diff',
      async (job) => {
        if (job.data.target === 'site-b') throw new Error(`ssh to vmhost failed with password ${CANARY}`);
        return 'done';
      },
      { connection: workerConnection, prefix },
    );
    await waitUntil(async () => (await diffs.getJobCountByTypes('failed', 'completed')) === 2);
    await worker.close();
    workerConnection.disconnect();
    const redact = createRedactor([CANARY]);
    server = await startHealthServer({ port: 0, host: '127.0.0.1', routes: dashboardRoutesFromEnv(ENV, { queues: () => [checks, diffs], redact, throttle: { maxFailures: 1000 } }) });
    base = `http://127.0.0.1:${server.port}`;
  });

  afterAll(async () => {
    await server?.close();
    await checks?.close();
    await diffs?.close();
    if (redis) {
      await deletePrefix(redis, prefix);
      redis.disconnect();
    }
  });

  it.each([
    ['no credentials', undefined],
    ['a wrong password', basic(ENV.DASHBOARD_USER, 'correct horse battery stapl')],
    ['a wrong user', basic('oncall2', ENV.DASHBOARD_PASSWORD)],
    ['a bearer token', 'Bearer abcdefabcdef'],
  ])('answers 401 with %s, and shows nothing', async (_label, authorization) => {
    for (const path of [DASHBOARD_PATH, DASHBOARD_JSON_PATH, `${DASHBOARD_PATH}/api/queues`, `${DASHBOARD_PATH}/queue/maas-dns-check`, `${DASHBOARD_PATH}/static/images/logo.svg`]) {
      const res = await fetch(`${base}${path}`, authorization ? { headers: { authorization } } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      const body = await res.text();
      expect(body).not.toContain('maas-dns-check');
      expect(body).not.toContain(CANARY);
    }
  });

  it('lists each queue with the right counts and its latest jobs (JSON)', async () => {
    const res = await fetch(`${base}${DASHBOARD_JSON_PATH}`, { headers: { authorization: GOOD } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(CANARY);
    const { queues } = JSON.parse(text) as { queues: QueueView[] };
    expect(queues.map((q) => q.name)).toEqual(['maas-dns-check', 'maas-mac-diff']);
    const [dns, macs] = queues as [QueueView, QueueView];
    expect(dns.counts).toMatchObject({ waiting: 2, delayed: 1, active: 0, failed: 0, completed: 0 });
    expect(macs.counts).toMatchObject({ waiting: 0, delayed: 0, failed: 1, completed: 1 });
    expect(dns.paused).toBe(false);
    expect(dns.jobs).toHaveLength(3);
    expect(dns.jobs.map((j) => j.state).sort()).toEqual(['delayed', 'waiting', 'waiting']);
    const prod = dns.jobs.find((j) => j.target === 'prod');
    expect(prod).toMatchObject({ name: 'dns-check', state: 'waiting', attempts: 0, failedReason: null });
    expect(prod?.data).toEqual({ target: 'prod', requestedBy: 'U0OPS1', note: 'key=[redacted]' });
    const failed = macs.jobs.find((j) => j.state === 'failed');
    expect(failed).toMatchObject({ name: 'mac-diff', target: 'site-b', attempts: 1 });
    expect(failed?.failedReason).toBe('ssh to vmhost failed with password [redacted]');
    expect(failed?.data).toEqual({ target: 'site-b', secretish: '[redacted]' });
  });

  it('bounds the job list with ?limit=', async () => {
    const res = await fetch(`${base}${DASHBOARD_JSON_PATH}?limit=1`, { headers: { authorization: GOOD } });
    const { queues } = (await res.json()) as { queues: QueueView[] };
    expect(queues.map((q) => q.jobs.length)).toEqual([1, 1]);
    expect(queues[0]?.counts.waiting).toBe(2);
  });

  /** Bull Board's API: the queues with the jobs of one state of one queue, as its page asks. */
  async function boardQueues(activeQueue: string, status: string): Promise<{ text: string; queues: BoardQueue[] }> {
    const res = await fetch(`${base}${DASHBOARD_PATH}/api/queues?activeQueue=${activeQueue}&status=${status}&page=1&jobsPerPage=10`, { headers: { authorization: GOOD } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    return { text, queues: (JSON.parse(text) as { queues: BoardQueue[] }).queues };
  }

  it('serves Bull Board: its page, its static files and its client-side routes, under a strict CSP', async () => {
    for (const path of [DASHBOARD_PATH, `${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/queue/maas-mac-diff`]) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: GOOD } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-powered-by')).toBeNull();
      const html = await res.text();
      expect(html).toContain(`<base href="${DASHBOARD_PATH}/"`);
      expect(html).toContain('maas-chatops queues');
      expect(html).not.toContain(CANARY);
    }
    const page = await (await fetch(`${base}${DASHBOARD_PATH}`, { headers: { authorization: GOOD } })).text();
    const script = /<script defer src="(static\/js\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${base}${DASHBOARD_PATH}/${script}`, { headers: { authorization: GOOD } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
  });

  it('Bull Board lists each queue, read-only, with the right counts and its jobs redacted', async () => {
    const { text, queues } = await boardQueues('maas-dns-check', 'waiting');
    expect(text).not.toContain(CANARY);
    expect(queues.map((q) => q.name).sort()).toEqual(['maas-dns-check', 'maas-mac-diff']);
    for (const q of queues) expect(q.readOnlyMode).toBe(true);
    const dns = queues.find((q) => q.name === 'maas-dns-check');
    expect(dns?.counts).toMatchObject({ waiting: 2, delayed: 1, active: 0, failed: 0, completed: 0 });
    expect(dns?.jobs.map((j) => j.data.target).sort()).toEqual(['<img src=x onerror=alert(1)>', 'prod']);
    expect(dns?.jobs.find((j) => j.data.target === 'prod')?.data).toEqual({ target: 'prod', requestedBy: 'U0OPS1', note: 'key=[redacted]' });
  });

  it('Bull Board redacts a failed job\'s reason and stack trace, in the list and in the job\'s own page', async () => {
    const { text, queues } = await boardQueues('maas-mac-diff', 'failed');
    expect(text).not.toContain(CANARY);
    const failed = queues.find((q) => q.name === 'maas-mac-diff')?.jobs[0];
    expect(failed?.failedReason).toBe('ssh to vmhost failed with password [redacted]');
    expect(failed?.stacktrace.join('\n')).toContain('[redacted]');
    expect(failed?.data).toEqual({ target: 'site-b', secretish: '[redacted]' });
    const one = await fetch(`${base}${DASHBOARD_PATH}/api/queues/maas-mac-diff/${failed?.id}`, { headers: { authorization: GOOD } });
    expect(one.status).toBe(200);
    const body = await one.text();
    expect(body).toContain('ssh to vmhost failed with password [redacted]');
    expect(body).not.toContain(CANARY);
  });

  it('is read-only: no method but GET, neither on the JSON nor on Bull Board\'s actions', async () => {
    const failedId = (await diffs.getJobs(['failed']))[0]?.id;
    const actions = [
      ['POST', DASHBOARD_JSON_PATH],
      ['PUT', `${DASHBOARD_PATH}/api/queues/maas-mac-diff/retry/failed`],
      ['PUT', `${DASHBOARD_PATH}/api/queues/maas-mac-diff/${failedId}/retry/failed`],
      ['PUT', `${DASHBOARD_PATH}/api/queues/maas-dns-check/pause`],
      ['PUT', `${DASHBOARD_PATH}/api/queues/maas-dns-check/empty`],
      ['POST', `${DASHBOARD_PATH}/api/queues/maas-dns-check/add`],
      ['DELETE', `${DASHBOARD_PATH}/api/queues/maas-dns-check/obliterate`],
      ['DELETE', `${DASHBOARD_PATH}/api/queues/maas-dns-check/clean/delayed`],
    ] as const;
    for (const [method, path] of actions) {
      const res = await fetch(`${base}${path}`, { method, headers: { authorization: GOOD, 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, `${method} ${path}`).toBe(405);
    }
    expect(await checks.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 2, delayed: 1 });
    expect(await checks.isPaused()).toBe(false);
    expect(await diffs.getJobCounts('failed', 'waiting')).toEqual({ failed: 1, waiting: 0 });
  });

  it('feeds the queue_depth gauge from the same queues', async () => {
    const depths = await bullmqDepthSupplier([checks, diffs])();
    expect(depths).toEqual({ 'maas-dns-check': 3, 'maas-mac-diff': 0 });
  });
});

describe('wrong dashboard passwords are throttled and audited', () => {
  const prefix = freshPrefix('dash-throttle');
  let redis: Redis;
  let server: HealthServer;
  let audit: ReturnType<typeof createAuditLog>;
  let clock = 1_000_000;

  /** A GET from a chosen loopback address, so two clients can be told apart. */
  function get(from: string, authorization?: string): Promise<{ status: number; retryAfter: string | undefined }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: DASHBOARD_JSON_PATH, localAddress: from, headers: authorization ? { authorization } : {} }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    audit = createAuditLog({ redis, key: `${prefix}:audit`, log: silentLogger(), redact: createRedactor([ENV.DASHBOARD_PASSWORD]) });
    const routes = dashboardRoutesFromEnv(ENV, { queues: [], redact: (s: string) => s, audit, throttle: { maxFailures: 5, windowMs: 15 * 60_000, now: () => clock } });
    server = await startHealthServer({ port: 0, host: '127.0.0.1', routes });
  });

  afterAll(async () => {
    await server?.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('five wrong passwords lock that address out, even with the right one; another address and a later time get in; each wrong try is audited', async () => {
    const wrong = basic(ENV.DASHBOARD_USER, 'not the password at all');
    expect((await get('127.0.0.1')).status).toBe(401);
    const tries = [];
    for (let i = 0; i < 5; i++) tries.push((await get('127.0.0.1', wrong)).status);
    expect(tries).toEqual([401, 401, 401, 401, 401]);
    const locked = await get('127.0.0.1', GOOD);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBe(15 * 60);
    expect((await get('127.0.0.2', GOOD)).status).toBe(200);
    clock += 15 * 60_000 + 1;
    expect((await get('127.0.0.1', GOOD)).status).toBe(200);

    await waitUntil(async () => (await audit.latest({ limit: 50 })).length === 5);
    const entries = await audit.latest({ limit: 50 });
    expect(entries.every((e) => e.kind === 'refusal' && e.action === 'queue-dashboard' && e.actor === 'http:127.0.0.1' && e.outcome === 'refused')).toBe(true);
    expect(entries[0]?.detail).toBe('wrong queue dashboard credentials from 127.0.0.1 (5 in the throttle window)');
    expect(JSON.stringify(entries)).not.toContain('not the password');
  });
});

describe('dashboard switch and credentials', () => {
  const noQueues = { queues: [], redact: (s: string) => s };

  it('is off (no routes) unless both variables are set', () => {
    expect(dashboardRoutesFromEnv({}, noQueues)).toEqual([]);
    expect(dashboardAuthFromEnv({})).toBeNull();
    expect(dashboardRoutesFromEnv(ENV, noQueues).map((r) => r.path)).toEqual([DASHBOARD_ROUTE, DASHBOARD_JSON_PATH]);
  });

  it('refuses half a configuration or a short password instead of opening the door', () => {
    expect(() => dashboardAuthFromEnv({ DASHBOARD_USER: 'oncall' })).toThrow(/DASHBOARD_PASSWORD is not set/);
    expect(() => dashboardAuthFromEnv({ DASHBOARD_PASSWORD: 'correct horse battery staple' })).toThrow(/DASHBOARD_USER is not set/);
    expect(() => dashboardAuthFromEnv({ DASHBOARD_USER: 'oncall', DASHBOARD_PASSWORD: 'short' })).toThrow(/shorter than 12/);
  });

  it('keeps the credentials as Secrets that print redacted', () => {
    const auth = dashboardAuthFromEnv(ENV);
    expect(JSON.stringify(auth)).not.toContain(ENV.DASHBOARD_PASSWORD);
    expect(String(auth?.password)).toBe('[redacted]');
  });

  it.each([
    [GOOD, true],
    [GOOD.replace('Basic', 'basic'), true],
    [basic('oncall', `${ENV.DASHBOARD_PASSWORD}x`), false],
    [basic('', ''), false],
    ['Basic !!!', false],
    [`Basic ${Buffer.from('no-colon').toString('base64')}`, false],
    [undefined, false],
  ])('isAuthorized(%s) is %s', (header, expected) => {
    const auth = dashboardAuthFromEnv(ENV);
    if (!auth) throw new Error('auth expected');
    expect(isAuthorized(header, auth)).toBe(expected);
  });
});
