import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { checkMessage, startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import { createAuditLog } from '../../src/engine/audit/audit-log.ts';
import { timelineReport } from '../../src/engine/audit/timeline-report.ts';
import { createLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { capturedLog } from './slack-harness.ts';

const redis = new Redis(TEST_REDIS_URL);
const prefix = freshPrefix('timeline-slack');
let emulator: SlackEmulator;
beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
});
afterEach(async () => {
  await emulator.close();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });

describe('/maas timeline in Slack', () => {
  it('one summary message (span, counts, latest verdict) and the whole timeline as a Markdown file in its thread', async () => {
    const audit = createAuditLog({ redis, key: `${prefix}:audit`, log: silent, redact: createRedactor([]) });
    const now = Date.now();
    await audit.record({ at: now - 60_000, kind: 'alert', actor: 'scheduler', action: 'dns-check', target: 'prod', subject: 'drift', outcome: 'opened' });
    for (let i = 0; i < 40; i++) await audit.record({ at: now - 50_000 + i, kind: 'repair-step', actor: 'U0LEAD1', action: 'set-dns-ips', target: 'prod', subject: `api-${i}.prod`, outcome: 'verified', detail: `read back 10.0.0.${i}` });
    await audit.record({ at: now - 1_000, kind: 'check', actor: 'U0OPS1', action: 'dns-check', target: 'prod', outcome: 'ok', detail: 'The DNS record of prod holds the running control plane <@U0PWNED>' });

    const report = await timelineReport(audit, 'prod', 3_600_000, now);
    const notifier = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: createRedactor([]), log: capturedLog().log, retryConfig: { retries: 0 }, threadIntervalMs: 0 });
    await notifier.postReports({ channel: 'C0OPS', user: 'U0OPS1' }, [report]);

    const top = emulator.messages.filter((m) => !m.threadTs);
    expect(top).toHaveLength(1);
    const summary = top[0]!;
    expect(checkMessage(summary)).toBeUndefined();
    // The message says the span and the count in one short verdict; the verdict in full (the counts
    // by kind, the latest verdict) opens its thread.
    expect(blocksText(summary.blocks ?? []).join('\n')).toMatch(/Timeline of prod since .*: 42 events/);
    const replies = emulator.messages.filter((m) => m.threadTs === summary.ts);
    const shown = replies.flatMap((m) => blocksText(m.blocks ?? [])).join('\n');
    expect(shown).toContain('42 events (1 alert event, 1 check, 40 writes)');
    expect(shown).toContain('Latest verdict: dns-check prod: ok');
    // Outside text stays text: on the wire (fallback text and blocks) it is escaped, so Slack pings
    // no one, and the reader sees it as it was written.
    const wire = [summary, ...replies].flatMap((m) => [m.text, ...textFields(m.blocks)]);
    expect(wire.join('\n')).not.toMatch(/<@U0PWNED>/);
    expect(wire.join('\n')).toContain('control plane &lt;@U0PWNED&gt;');
    expect(shown).toContain('control plane <@U0PWNED>');
    const files = emulator.files.filter((f) => f.threadTs === summary.ts);
    const markdown = files.find((f) => f.filename === 'prod-timeline.md');
    expect(markdown, 'the timeline file in the thread').toBeDefined();
    const rows = (markdown?.content ?? '').split('\n').filter((l) => l.startsWith('| 20'));
    // Never cut: every event is a row of the file.
    expect(rows).toHaveLength(42);
    // A file carries ISO 8601 times (UTC, with Z), never a date token or a zone-less time.
    for (const row of rows) expect(row).toMatch(/^\| \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z \|/);
    expect(markdown?.content).not.toContain('<!date^');
    expect(rows.at(-2) ?? '').toContain('set-dns-ips api-39.prod: verified: read back 10.0.0.39');
  });
});

/** Every `text` string of Slack blocks, as sent (still escaped). */
function textFields(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(textFields);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (k === 'text' && typeof v === 'string' ? [v] : textFields(v)));
}
