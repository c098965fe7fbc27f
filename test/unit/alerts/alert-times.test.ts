import { describe, expect, it } from 'vitest';
import { blocksText } from '../../../lab/transcript.ts';
import type { Finding } from '../../../src/core/report.ts';
import { alertEvidence, renderAlert } from '../../../src/edge/alerts/alert-message.ts';
import type { AlertRecord } from '../../../src/edge/alerts/alert-record.ts';
import { withIsoTimes } from '../../../src/edge/slack/slack-dates.ts';
import { applyWitnesses, eventTime } from '../../../src/features/macs/witnesses.ts';

/*
 * One time format (issue 31): in Slack every time is a date token to the second, and an age is
 * Slack's `{ago}` token, which stays true as the message ages (a written "(3d 3h ago)" does not);
 * in a file, ISO 8601 in UTC. Token names: Slack's "Formatting text: date formatting"
 * (https://docs.slack.dev/messaging/formatting-message-text#date-formatting).
 */

const NOW = Date.parse('2026-07-24T13:00:00Z');
const PXE_AT = 'Tue, 21 Jul. 2026 09:12:31';
const TOKEN = /<!date\^(\d+)\^([^|>]*)\|([^>]*)>/g;

const drift: Finding = {
  code: 'MAC_DRIFT',
  severity: 'critical',
  subject: 'node-1',
  summary: 'node-1: MAAS records 52:54:00:00:00:01, the VM has 52:54:00:7f:00:01',
  evidence: { systemId: 'aa01', hostname: 'node-1', recorded: '52:54:00:00:00:01', live: '52:54:00:7f:00:01' },
};

function witnessedDrift(): Finding {
  const events = { count: 1, prev_uri: null, next_uri: null, events: [{ id: 5, node: 'aa01', hostname: 'node-1', type: 'Performing PXE boot', description: '', created: PXE_AT, level: 'INFO' }] };
  const [f] = applyWitnesses([drift], 'site-b', { discovery: { ok: true, value: [] }, events: { ok: true, value: events } as never, eventLimit: 100, now: new Date(NOW) });
  return f!;
}

function record(findings: Finding[]): AlertRecord {
  return {
    id: 'a1',
    check: 'mac-diff',
    target: 'site-b',
    kind: 'drift',
    state: 'open',
    openedAt: NOW - 25 * 60_000,
    lastSeenAt: NOW - 3 * 60_000,
    reopened: 0,
    status: 'critical',
    verdict: '1 machine has a drifted MAC',
    findings,
    members: findings.map((f) => ({ fingerprint: f.subject, code: f.code, subject: f.subject, digest: '', since: NOW })),
  };
}

const tokens = (text: string) => [...text.matchAll(TOKEN)].map(([, unix, format, fallback]) => ({ unix: Number(unix), format, fallback }));
/** What a reader sees when every token is taken away: a written age left there would go stale. */
const outsideTokens = (text: string) => text.replace(TOKEN, '');

describe('times in alerts', () => {
  it("an open alert's last check carries Slack's {ago}, so its age stays true when nothing edits the alert", () => {
    const msg = renderAlert(record([drift]), NOW);
    const context = JSON.stringify(msg.blocks);
    const lastChecked = tokens(context.slice(context.indexOf('last checked')))[0];
    expect(lastChecked).toEqual({ unix: (NOW - 3 * 60_000) / 1000, format: '{date_short_pretty} {time_secs} ({ago})', fallback: '2026-07-24 12:57:00 UTC' });
    expect(outsideTokens(context)).not.toMatch(/\bago\b/);
  });

  it("MAAS's event time in the alert's thread: a token to the second, as the alert's own times, with {ago} in place of the written age", () => {
    const thread = alertEvidence(record([witnessedDrift()])).messages.map((m) => JSON.stringify(m.blocks)).join('\n');
    const pxe = tokens(thread).find((t) => t.unix === eventTime(PXE_AT) / 1000);
    expect(pxe).toEqual({ unix: eventTime(PXE_AT) / 1000, format: '{date_short_pretty} {time_secs} ({ago})', fallback: '2026-07-21 09:12:31 UTC (3d 3h ago)' });
    expect(outsideTokens(thread)).not.toMatch(/\d+[dhms] ago/);
    // Clients that cannot show tokens read the fallback: the same second and the age when it was written.
    expect(blocksText(alertEvidence(record([witnessedDrift()])).messages.flatMap((m) => m.blocks ?? [])).join('\n')).toContain('no PXE event since 2026-07-21 09:12:31 UTC (3d 3h ago)');
  });

  it('in a file the same time is ISO 8601 in UTC, to the second', () => {
    expect(withIsoTimes(witnessedDrift().summary)).toContain('no PXE event since 2026-07-21T09:12:31Z (3d 3h ago)');
  });
});
