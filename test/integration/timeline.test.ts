import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createAuditLog, type AuditLog } from '../../src/engine/audit/audit-log.ts';
import type { AuditInput } from '../../src/engine/audit/audit-entry.ts';
import { runTimelineCli } from '../../src/engine/audit/timeline-cli.ts';
import type { TimelineEvent } from '../../src/engine/audit/timeline.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { createLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

const KEY = 'ck1234567890abcdefgh:tk1234567890abcdefgh:ts1234567890abcdefghijkl';
const CONFIG = `
slack: { commandChannels: [C0OPS], approvers: [U0LEAD1] }
maas:
  region-a: { url: http://127.0.0.1:5240/MAAS, apiKey: env:MAAS_KEY }
sites:
  site-b: { maas: region-a, machines: { zone: site-b } }
clusters:
  prod: { maas: region-a, kube: { namespace: capi } }
`;
const env = { MAAS_KEY: KEY, REDIS_URL: TEST_REDIS_URL };
const loaded = parseConfigText(CONFIG, { path: 'test.yaml', env, readFile: () => '' });

const redis = new Redis(TEST_REDIS_URL);
const prefix = freshPrefix('timeline');
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });
const T0 = Date.parse('2026-12-01T03:00:00Z');
const min = 60_000;

/** The wiped-record incident as the bot records it, with an unrelated target and an older event around it. */
const INCIDENT: AuditInput[] = [
  { at: T0 - 5 * 3_600_000, kind: 'command', actor: 'U0OPS1', action: 'dns-check', target: 'prod', outcome: 'queued' },
  { at: T0, kind: 'alert', actor: 'scheduler', action: 'dns-check', target: 'prod', subject: 'drift', outcome: 'opened' },
  { at: T0 + 1 * min, kind: 'command', actor: 'U0OPS1', channel: 'C0OPS', action: 'dns-check', target: 'prod', outcome: 'queued' },
  { at: T0 + 1 * min + 2_000, kind: 'check', actor: 'U0OPS1', action: 'dns-check', target: 'prod', outcome: 'critical', detail: 'The DNS record of prod is empty | cached hash e3b0c442…b855' },
  { at: T0 + 2 * min, kind: 'command', actor: 'U0OPS1', action: 'resolver-check', target: 'site-b', outcome: 'queued' },
  { at: T0 + 3 * min, kind: 'plan', actor: 'U0OPS1', channel: 'C0OPS', action: 'fix-dns', target: 'prod', outcome: 'posted', detail: '1 step: set the record', planId: 'aaaabbbbccccdddd' },
  { at: T0 + 4 * min, kind: 'approval', actor: 'U0LEAD1', channel: 'C0OPS', action: 'fix-dns', target: 'prod', outcome: 'approved', planId: 'aaaabbbbccccdddd' },
  { at: T0 + 4 * min + 1_000, kind: 'repair-step', actor: 'U0LEAD1', action: 'set-dns-ips', target: 'prod', subject: 'api.prod.maas', outcome: 'verified', detail: 'read back 10.0.0.11, 10.0.0.12\n<@U0PWNED> forged', planId: 'aaaabbbbccccdddd' },
  { at: T0 + 4 * min + 2_000, kind: 'repair', actor: 'U0LEAD1', action: 'fix-dns', target: 'prod', outcome: 'applied', detail: '1 of 1 steps verified', planId: 'aaaabbbbccccdddd' },
  { at: T0 + 9 * min, kind: 'alert', actor: 'scheduler', action: 'dns-check', target: 'prod', subject: 'drift', outcome: 'resolved' },
];

async function seed(key: string): Promise<AuditLog> {
  const audit = createAuditLog({ redis, key, log: silent, redact: createRedactor([]) });
  // Recorded out of order on purpose: two workers append as their work ends, not as it started.
  for (const entry of [...INCIDENT].reverse()) await audit.record(entry);
  return audit;
}

async function timeline(args: string[], options: { since?: string; format?: string; keyPrefix: string }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runTimelineCli({ loaded, env, args, ...(options.since ? { since: options.since } : {}), ...(options.format ? { format: options.format } : {}), out: (s) => out.push(s), err: (s) => err.push(s), prefix: options.keyPrefix, now: () => T0 + 10 * min });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('maas-chatops timeline', () => {
  it('--format json: one array, oldest first, of the target in the span, each event with at, kind, actor, target and summary', async () => {
    const p = `${prefix}:a`;
    await seed(`${p}:audit`);
    const { code, out, err } = await timeline(['prod'], { since: '2h', format: 'json', keyPrefix: p });
    expect(err).toBe('');
    expect(code).toBe(0);
    const events = JSON.parse(out) as TimelineEvent[];
    expect(events.map((e) => e.kind)).toEqual(['alert', 'command', 'check', 'plan', 'approval', 'write', 'repair', 'alert']);
    expect(events.map((e) => e.at)).toEqual([...events.map((e) => e.at)].sort());
    expect(events[0]).toEqual({ at: '2026-12-01T03:00:00.000Z', kind: 'alert', actor: 'scheduler', target: 'prod', summary: 'dns-check prod alert opened (drift)' });
    expect(events.find((e) => e.kind === 'approval')).toMatchObject({ actor: 'U0LEAD1', summary: 'approved the fix-dns prod plan', detail: { planId: 'aaaabbbbccccdddd' } });
    expect(events.find((e) => e.kind === 'write')?.detail).toMatchObject({ action: 'set-dns-ips', subject: 'api.prod.maas', outcome: 'verified' });
    expect(events.every((e) => e.target === 'prod')).toBe(true);
  });

  it('Markdown: one table row per event, its time in ISO 8601 (UTC, Z), the counts and the latest verdict, outside text kept as text on one line', async () => {
    const p = `${prefix}:b`;
    await seed(`${p}:audit`);
    const { code, out } = await timeline(['prod'], { since: '2h', keyPrefix: p });
    expect(code).toBe(0);
    expect(out).toContain('# Timeline: prod');
    expect(out).toContain('From 2026-12-01T01:10:00Z to 2026-12-01T03:10:00Z: 8 events (2 alert events, 1 check, 1 plan, 1 decision, 1 write, 1 repair ended, 1 command).');
    expect(out).toContain('Latest verdict: dns-check prod alert resolved (drift) (2026-12-01T03:09:00Z)');
    const rows = out.split('\n').filter((l) => /^\| 2026-/.test(l));
    expect(rows).toHaveLength(8);
    // Every time in the file is ISO 8601 with its zone: none is left as "2026-12-01 03:00:00 UTC".
    expect(out).not.toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    expect(rows[0]).toBe('| 2026-12-01T03:00:00Z | alert | scheduler | prod | dns-check prod alert opened (drift) |');
    // The pipe in MAAS's text stays inside its cell; the newline and the mention do not become markup.
    expect(rows.find((r) => r.includes('| check |'))).toContain('The DNS record of prod is empty \\| cached hash');
    const write = rows.find((r) => r.includes('| write |')) ?? '';
    // The trail stores one line (the newline as \\u{a}); the mention is text.
    expect(write).toContain('read back 10.0.0.11, 10.0.0.12\\u{a}&lt;@U0PWNED&gt; forged');
    expect(out).not.toContain('<@U0PWNED>');
  });

  it('all: every target; a span that excludes everything says the trail holds nothing', async () => {
    const p = `${prefix}:c`;
    await seed(`${p}:audit`);
    const all = JSON.parse((await timeline(['all'], { since: '6h', format: 'json', keyPrefix: p })).out) as TimelineEvent[];
    expect(all).toHaveLength(INCIDENT.length);
    expect(new Set(all.map((e) => e.target))).toEqual(new Set(['prod', 'site-b']));
    const empty = await timeline(['site-b'], { since: '1m', keyPrefix: p });
    expect(empty.out).toContain('The audit trail holds nothing for this span.');
  });

  it('bad input: an unknown target, a bad duration or format exit 64 naming what is wrong', async () => {
    expect(await timeline(['nope'], { keyPrefix: prefix })).toMatchObject({ code: 64, err: 'maas-chatops timeline: no site or cluster "nope"; known: prod, site-b' });
    expect(await timeline(['prod'], { since: 'yesterday', keyPrefix: prefix })).toMatchObject({ code: 64, err: expect.stringContaining('--since takes a duration such as 30m, 2h or 1d') });
    expect(await timeline(['prod'], { format: 'csv', keyPrefix: prefix })).toMatchObject({ code: 64, err: 'maas-chatops timeline: --format takes md or json, not "csv"' });
  });
});
