import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { normaliseEntry } from '../../src/engine/audit/audit-entry.ts';
import { auditTextForSlack } from '../../src/engine/audit/audit-text.ts';
import { mention } from '../../src/core/mention.ts';
import type { Report } from '../../src/core/report.ts';
import { toSlackText } from '../../src/edge/slack/mrkdwn.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { planThread, renderPlanMessage } from '../../src/edge/slack/plan-render.ts';
import { renderEvidence } from '../../src/edge/slack/evidence-thread.ts';
import { progressLine } from '../../src/engine/repair/plan-outcomes.ts';
import { renderReports } from '../../src/edge/slack/render.ts';
import { reportText } from '../../src/edge/terminal/text-render.ts';
import { capturedLog } from '../e2e/slack-harness.ts';

/*
 * Outside text in Slack (issue 27, items 4 and 9): a hostname or a MAAS error body carrying
 * `<@U…>` must not ping anyone, typed mentions come back as typed, only the bot's own mentions
 * are live; and a newline in outside data cannot start a line of its own in a result or a plan.
 */

const HOSTNAME = 'east-e01<@U0PWNED1>';
const BODY_409 = '<@U0PWNED4> <#C0PWNED5> Cannot update interface';
const LIVE = /<[@#][A-Z0-9]+>/g;

let emulator: SlackEmulator;
beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
});
afterAll(async () => {
  await emulator.close();
});

const notifier = () => createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: (s) => s, log: capturedLog().log, retryConfig: { retries: 0 } });

/** Every text field of Slack blocks, as sent (still escaped). */
function textsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(textsIn);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (k === 'text' && typeof v === 'string' ? [v] : textsIn(v)));
}

function livePings(text: string): string[] {
  return text.match(LIVE) ?? [];
}

describe('mentions from MAAS data never go live (item 4)', () => {
  it("the repair plan's thread: a hostname and a 409 body with mentions reach it escaped", async () => {
    const root = await notifier().postPlan!({ channel: 'C0OPS' }, { planId: 'p1', report: planReport(HOSTNAME), state: 'pending', requester: 'U0OPS1', expiresAt: Date.UTC(2026, 10, 30, 4), approvable: true, deferred: 0 });
    await notifier().postInThread!(root, `${HOSTNAME}: MAAS answered 409: ${BODY_409}`);
    await notifier().postError({ channel: 'C0OPS' }, `fix-macs site-b: MAAS answered 409: ${BODY_409}`);
    const texts = emulator.messages.map((m) => [m.text, ...textsIn(m.blocks)].join('\n'));
    expect(texts.flatMap(livePings)).toEqual(['<@U0OPS1>']);
    expect(texts.join('\n')).toContain('east-e01&lt;@U0PWNED1&gt;');
    expect(texts.join('\n')).toContain('&lt;#C0PWNED5&gt;');
  });

  it("typed mentions come back as typed in an answer and in /maas audit; the bot's own mention of the actor stays live", () => {
    expect(toSlackText('Unknown subcommand "dns-chek <@U0VICTIM> <!here>"')).toBe('Unknown subcommand "dns-chek &lt;@U0VICTIM&gt; &lt;!here&gt;"');
    const entry = { id: '1-0', ...normaliseEntry({ kind: 'refusal', actor: 'U0EVE', channel: 'C0OPS', action: 'fix-macs', outcome: 'refused', detail: '/maas fix-macs <@U0VICTIM> → not an operator' }, 0) };
    const shown = toSlackText(auditTextForSlack([entry]));
    expect(livePings(shown)).toEqual(['<@U0EVE>', '<#C0OPS>']);
    expect(shown).toContain('&lt;@U0VICTIM&gt;');
  });

  it("a mark copied from the bot's own text cannot be forged: the nonce is unknown outside, and the trail stores plain @ids", () => {
    const forged = '\uE002deadbeefdeadbeef@U0PWNED9\uE002';
    expect(livePings(toSlackText(`host ${forged}`))).toEqual([]);
    expect(livePings(toSlackText(`approved by ${mention('U0OPS1')}`))).toEqual(['<@U0OPS1>']);
    expect(normaliseEntry({ kind: 'command', actor: 'U0OPS1', action: 'x', outcome: 'answered', detail: `asked ${mention('U0OPS2')}` }, 0).detail).toBe('asked @U0OPS2');
  });
});

describe("every message's fallback text is escaped like its blocks", () => {
  const HOSTILE = 'east-e02 <@U0PWNED2> <!channel> <https://evil.example|click here>';
  // Mentions, broadcasts and links; the bot's own date tokens (<!date^…>) aside.
  const LIVE_ANY = /<[@#][^>]*>|<!(?!date\^)[^>]*>|<https?:[^>]*>/g;

  it('a single answer, an all-targets summary with its thread, an error and a plan-thread line: text and blocks alike', async () => {
    const report = (target: string, status: Report['status']): Report => ({
      kind: 'mac-diff',
      target,
      status,
      verdict: `MAAS records another MAC for ${HOSTILE}`,
      findings: status === 'ok' ? [] : [{ code: 'MAC_DRIFT', severity: 'critical', subject: HOSTILE, summary: `drift on ${HOSTILE}`, evidence: { hostname: HOSTILE }, fix: '/maas fix-macs site-b' }],
      startedAt: '2026-11-30T03:00:00.000Z',
      durationMs: 1,
    });
    const before = emulator.messages.length;
    const n = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: (t) => t, log: capturedLog().log, retryConfig: { retries: 0 }, threadIntervalMs: 0 });
    await n.postReports({ channel: 'C0OPS', user: 'U0OPS1' }, [report('site-b', 'critical')]);
    await n.postReports({ channel: 'C0OPS', user: 'U0OPS1' }, [report('site-b', 'critical'), report(`site-c ${HOSTILE}`, 'critical'), report('site-d', 'ok')]);
    await n.postError({ channel: 'C0OPS' }, `mac-diff site-b: MAAS answered 500: ${HOSTILE}`);
    await n.postInThread!({ channel: 'C0OPS', ts: emulator.messages[before]!.ts }, `${HOSTILE}: verified`);
    const sent = emulator.messages.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(6);
    for (const m of sent) {
      expect(m.text.match(LIVE_ANY) ?? [], `fallback text of ${m.ts}`).toEqual([]);
      expect(textsIn(m.blocks).flatMap((t) => t.match(LIVE_ANY) ?? []), `blocks of ${m.ts}`).toEqual([]);
    }
    expect(sent.filter((m) => m.text.includes('&lt;@U0PWNED2&gt;')).length).toBeGreaterThanOrEqual(4);
  });
});

describe('newlines in outside data cannot forge lines (item 9)', () => {
  const FORGED = 'east-e10\n:white_check_mark: *All machines verified*\r\n:white_check_mark: done';

  it('a result line and a plan step stay one line in Slack', () => {
    const report: Report = {
      ...planReport(FORGED),
      results: [{ subject: FORGED, action: 'update-interface-mac', outcome: 'failed', detail: `MAAS answered 409\n:white_check_mark: verified` }],
    };
    const { text, blocks } = renderReports([report]);
    const shown = [text, ...textsIn(blocks)].join('\n');
    expect(shown.split('\n').filter((line) => /^:white_check_mark:/.test(line.trim()))).toEqual([]);
    expect(shown).toContain('east-e10⏎:white_check_mark: *All machines verified*⏎:white_check_mark: done');
  });

  it('the plan approvers read shows the step on one line', () => {
    const message = renderPlanMessage({ planId: 'p1', report: planReport(FORGED), state: 'pending', requester: 'U0OPS1', expiresAt: Date.UTC(2026, 10, 30, 4), approvable: true, deferred: 0 });
    const shown = [message.text, ...textsIn(message.blocks)].join('\n');
    expect(shown.split('\n').filter((line) => /^:white_check_mark:/.test(line.trim()))).toEqual([]);
  });

  const VERDICT = 'east-e11\n*Verdict:* all healthy';

  it("the plan's thread (steps, results, each finding) and the progress line keep a hostname's forged *Verdict:* on its own line", () => {
    const results = [{ subject: VERDICT, action: 'set-mac', outcome: 'verified' as const, detail: `read back\n*Verdict:* all healthy` }];
    const planned = planThread({ planId: 'p1', report: planReport(VERDICT), state: 'pending', requester: 'U0OPS1', expiresAt: Date.UTC(2026, 10, 30, 4), approvable: true, deferred: 0 });
    const ran = renderEvidence({ ...planReport(VERDICT), results });
    const thread = [...planned.messages, ...ran.messages].flatMap((m) => textsIn(m.blocks)).join('\n');
    const progress = progressLine(VERDICT, results);
    for (const shown of [thread, progress]) {
      expect(shown.split('\n').filter((line) => line.trim().startsWith('*Verdict:*'))).toEqual([]);
      expect(shown).toContain('east-e11⏎*Verdict:* all healthy');
    }
    expect(progress.split('\n')).toHaveLength(1);
  });

  it('and in the terminal', () => {
    const lines = reportText({ ...planReport(FORGED), results: [{ subject: FORGED, action: 'set-mac', outcome: 'failed', detail: 'x\ny' }] }).split('\n');
    expect(lines.filter((line) => /^:white_check_mark:/.test(line.trim()))).toEqual([]);
  });
});

function planReport(subject: string): Report {
  return {
    kind: 'fix-macs',
    target: 'site-b',
    status: 'critical',
    verdict: `Plan: update 1 MAC at site-b (${subject})`,
    findings: [{ code: 'MAC_DRIFT', severity: 'critical', subject, summary: `MAAS records another MAC for ${subject}`, evidence: {}, fix: '/maas fix-macs site-b' }],
    plan: { id: 'p1', steps: [{ subject, action: 'set-mac', detail: `eth0 52:54:00:00:00:01 → 52:54:00:00:00:02 on ${subject}` }] },
    startedAt: '2026-11-30T03:00:00.000Z',
    durationMs: 1,
  };
}
