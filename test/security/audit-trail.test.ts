import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { auditKey, createAuditLog } from '../../src/engine/audit/audit-log.ts';
import { createLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { freePort } from '../../lab/private-redis.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/*
 * Attacks on the audit trail itself: a secret in an entry (it must reach neither Redis nor the
 * log), an unbounded stream, and Redis going away so that recording would hang the command path.
 */

const redis = new Redis(TEST_REDIS_URL);
const prefix = freshPrefix('audit');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'info', destination: new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c)) as Record<string, unknown>), done()) }) });
  return { log, lines };
}

describe('the audit trail on Redis', () => {
  it('appends to a bounded stream, newest first, filtered by target, and logs every entry', async () => {
    const { log, lines } = capture();
    const audit = createAuditLog({ redis, key: auditKey({}, prefix), maxEntries: 100, log, redact: createRedactor([]) });
    for (let i = 0; i < 400; i++) await audit.record({ kind: 'command', actor: 'U0OPS1', channel: 'C0OPS', action: 'dns-check', target: i % 4 === 0 ? 'prod' : 'staging', outcome: 'queued', detail: `n=${i}` });
    // MAXLEN ~ trims whole stream nodes: about the bound, never unbounded.
    expect(await redis.xlen(`${prefix}:audit:activity`)).toBeLessThanOrEqual(200);
    expect(await redis.xlen(`${prefix}:audit:activity`)).toBeGreaterThanOrEqual(100);
    const latest = await audit.latest({ limit: 3 });
    expect(latest.map((e) => e.detail)).toEqual(['n=399', 'n=398', 'n=397']);
    const prod = await audit.latest({ target: 'prod', limit: 5 });
    expect(prod.map((e) => e.detail)).toEqual(['n=396', 'n=392', 'n=388', 'n=384', 'n=380']);
    expect(lines.filter((l) => l.msg === 'audit: command dns-check prod by U0OPS1: queued')).toHaveLength(100);
  });

  it('the config key wins over the prefix', () => {
    expect(auditKey({ audit: { key: 'ops:trail', maxEntries: 100 } }, prefix)).toBe('ops:trail');
    expect(auditKey({}, 'maas-chatops')).toBe('maas-chatops:audit');
  });

  it('never stores or logs a secret', async () => {
    const { log, lines } = capture();
    const audit = createAuditLog({ redis, key: `${prefix}:audit-secret`, log, redact: createRedactor(['the-canary-secret-42']) });
    await audit.record({ kind: 'command', actor: 'U0OPS1', action: 'dns-check', outcome: 'failed', detail: 'MAAS said the-canary-secret-42 and Bearer abc123def456ghi' });
    const raw = JSON.stringify(await redis.xrange(`${prefix}:audit-secret:activity`, '-', '+'));
    expect(raw).not.toContain('the-canary-secret-42');
    expect(raw).not.toContain('abc123def456ghi');
    expect(raw).toContain('[redacted]');
    expect(JSON.stringify(lines)).not.toContain('the-canary-secret-42');
  });

  it('with Redis unreachable, record() returns within its timeout and the entry is still in the log', async () => {
    const { log, lines } = capture();
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: null, retryStrategy: () => 200, lazyConnect: false });
    dead.on('error', () => undefined);
    try {
      const audit = createAuditLog({ redis: dead, key: `${prefix}:audit-dead`, log, redact: createRedactor([]), timeoutMs: 200 });
      await audit.record({ kind: 'refusal', actor: 'U0EVE', action: 'fix-macs', outcome: 'refused' });
      expect(lines.map((l) => l.msg)).toEqual(['audit: refusal fix-macs by U0EVE: refused', 'could not append to the audit trail in Redis; the entry above is in this log only']);
    } finally {
      dead.disconnect();
    }
  });
});
