import { request } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog, REFUSAL_SAMPLE_PER_ACTOR, type AuditLog } from '../../src/engine/audit/audit-log.ts';
import { startHealthServer, type HealthServer } from '../../src/edge/http/health.ts';
import { DASHBOARD_JSON_PATH, dashboardRoutesFromEnv } from '../../src/edge/http/queue-dashboard.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

/*
 * Flushing the audit trail (issue 27, item 6): wrong dashboard passwords from many addresses,
 * refused /maas commands from a non-operator, or a storm of commands and alerts must not push the
 * decisions (the plan, its approval, each write, how the repair ended) out of the trimmed stream.
 * Refusals are counted and sampled; decisions are never trimmed by anything but decisions.
 */

const ENV = { DASHBOARD_USER: 'oncall', DASHBOARD_PASSWORD: 'correct horse battery staple' };
const WRONG = `Basic ${Buffer.from('oncall:guess').toString('base64')}`;

const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
const prefix = freshPrefix('audit-flood');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** A repair's whole life as the trail records it, oldest first. */
const DECISIONS = ['plan', 'approval', 'repair-step', 'repair'];

async function decisions(audit: AuditLog): Promise<void> {
  await audit.record({ kind: 'plan', actor: 'U0OPERATOR', action: 'fix-macs', target: 'site-b', planId: 'plan-1', outcome: 'posted', detail: '1 step' });
  await audit.record({ kind: 'approval', actor: 'U0APPROVER', action: 'approve', target: 'site-b', planId: 'plan-1', outcome: 'approved' });
  await audit.record({ kind: 'repair-step', actor: 'U0APPROVER', action: 'update-interface-mac', target: 'site-b', subject: 'east-e01', planId: 'plan-1', outcome: 'verified' });
  await audit.record({ kind: 'repair', actor: 'U0APPROVER', action: 'fix-macs', target: 'site-b', planId: 'plan-1', outcome: 'succeeded', detail: '1 of 1 steps verified' });
}

function kept(entries: { kind: string; planId?: string }[]): string[] {
  return entries.filter((e) => e.planId === 'plan-1').map((e) => e.kind);
}

describe('refused commands from a non-operator cannot flush the decisions (item 6)', () => {
  it("1,100 refusals after a repair: its plan, approval, step and end are still read back, the refusals are counted and only sampled", async () => {
    const key = `${prefix}:cmd`;
    const audit = createAuditLog({ redis, key, maxEntries: 100, log: silentLogger(), redact: createRedactor([]) });
    await decisions(audit);
    for (let i = 0; i < 1_100; i++) {
      await audit.record({ kind: 'refusal', actor: 'U0INTRUDER', channel: 'C0OPS', action: 'fix-macs', target: 'site-b', outcome: 'refused', detail: `/maas fix-macs site-b → not an operator (${i})` });
    }
    expect(kept(await audit.latest({ limit: 500 }))).toEqual([...DECISIONS].reverse());
    expect(await redis.xlen(key)).toBe(DECISIONS.length);
    expect(await redis.xlen(`${key}:refusals`)).toBe(REFUSAL_SAMPLE_PER_ACTOR);
    expect(await redis.hget(`${key}:refusal-counts`, 'total')).toBe('1100');
    expect(await redis.hget(`${key}:refusal-counts`, 'actor:U0INTRUDER')).toBe('1100');
    // The timeline reads the same three streams.
    const { entries } = await audit.range({ since: 0 });
    expect(kept(entries)).toEqual(DECISIONS);
  });

  it("1,100 commands and alerts after a repair (an alert storm, a busy channel) trim each other, never the repair's decisions", async () => {
    const key = `${prefix}:activity`;
    const audit = createAuditLog({ redis, key, maxEntries: 100, log: silentLogger(), redact: createRedactor([]) });
    await decisions(audit);
    for (let i = 0; i < 550; i++) {
      await audit.record({ kind: 'command', actor: 'U0OPERATOR', channel: 'C0OPS', action: 'dns-check', target: 'site-b', outcome: 'queued', detail: `/maas dns-check site-b (${i})` });
      await audit.record({ kind: 'alert', actor: 'scheduler', action: 'dns-check', target: 'site-b', outcome: i % 2 ? 'fired' : 'resolved' });
    }
    expect(kept(await audit.latest({ limit: 500 }))).toEqual([...DECISIONS].reverse());
    expect(await redis.xlen(key)).toBe(DECISIONS.length);
    expect(await redis.xlen(`${key}:activity`)).toBeLessThan(1_100);
    expect(kept((await audit.range({ since: 0 })).entries)).toEqual(DECISIONS);
  });
});

describe('wrong dashboard passwords from 220 loopback addresses (item 6)', () => {
  let server: HealthServer;
  let audit: AuditLog;
  const key = `${prefix}:dash`;

  beforeAll(async () => {
    audit = createAuditLog({ redis, key, maxEntries: 100, log: silentLogger(), redact: createRedactor([ENV.DASHBOARD_PASSWORD]) });
    const routes = dashboardRoutesFromEnv(ENV, { queues: [], redact: (s: string) => s, audit });
    server = await startHealthServer({ port: 0, host: '127.0.0.1', routes });
  });
  afterAll(async () => {
    await server?.close();
  });

  function get(from: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: DASHBOARD_JSON_PATH, localAddress: from, agent: false, headers: { authorization: WRONG } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('1,100 tries, 5 per address: the global cap stops them, the approvals stay, the trail holds a bounded sample', async () => {
    await decisions(audit);
    const statuses: number[] = [];
    for (let round = 0; round < 5; round++) {
      for (let host = 1; host <= 220; host++) statuses.push(await get(`127.0.1.${host}`));
    }
    const refused = statuses.filter((s) => s === 401).length;
    // The per-address limit alone would have let all 1,100 through as 401s.
    expect(refused).toBe(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1_000);
    await waitUntil(async () => (await redis.hget(`${key}:refusal-counts`, 'total')) === '100');
    expect(kept(await audit.latest({ limit: 500 }))).toEqual([...DECISIONS].reverse());
    expect(await redis.xlen(key)).toBe(DECISIONS.length);
    expect(await redis.xlen(`${key}:refusals`)).toBeLessThanOrEqual(100);
  });
});
