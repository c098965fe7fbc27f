import { describe, expect, it } from 'vitest';
import { renderAlert } from '../../../src/edge/alerts/alert-message.ts';
import type { AlertRecord } from '../../../src/edge/alerts/alert-record.ts';
import { checkMessage } from '../../../lab/slack-emulator/index.ts';
import type { PlanState } from '../../../src/engine/repair/plan-store.ts';
import type { KnownBlock, SectionBlock } from '@slack/types';
import { fitMessage, plainFallback, type OutgoingMessage } from '../../../src/edge/slack/message-budget.ts';
import { SLACK_MESSAGE_LIMITS } from '../../../src/edge/slack/message-limits.ts';
import { renderSummary } from '../../../src/edge/slack/all-summary.ts';
import { renderPlanMessage } from '../../../src/edge/slack/plan-render.ts';
import { renderReport, renderReports } from '../../../src/edge/slack/render.ts';
import type { Report } from '../../../src/core/report.ts';
import { documentedFindingCodes, generateWorld } from '../../helpers/report-worlds.ts';

// Seeds 5011… are worlds whose `all` summary once went past the aggregate limit (found by bench/slack-at-scale.ts).
const SEEDS = [...Array.from({ length: 24 }, (_, i) => 1000 + i), 5011, 5067, 5114, 5126];
const EXTREMES = [
  { targets: 1, machines: 1 },
  { targets: 1, machines: 1000 },
  { targets: 200, machines: 1000 },
  { targets: 200, machines: 200 },
  { targets: 25, machines: 300 },
];
const STATES: PlanState[] = ['pending', 'approved', 'executing', 'done', 'failed', 'rejected', 'expired', 'superseded'];

type Payload = OutgoingMessage;

/** Every message the bot builds from a world: all of it, each target alone, its plans in every state, its alerts. */
function payloadsOf(reports: Report[]): Payload[] {
  const out: Payload[] = [renderReports(reports), renderSummary(reports).message];
  for (const report of reports.slice(0, 12)) {
    out.push(renderReport(report));
    if (report.plan) {
      for (const state of STATES) {
        out.push(renderPlanMessage({ planId: report.plan.id, report, state, requester: 'U0OPS1', expiresAt: Date.UTC(2026, 10, 30, 4), decidedBy: 'U0APPR', decidedAt: Date.UTC(2026, 10, 30, 3, 30), approvable: true }));
      }
    }
    out.push(renderAlert(alertOf(report, 'open'), Date.UTC(2026, 10, 30, 5)), renderAlert(alertOf(report, 'resolved'), Date.UTC(2026, 10, 30, 5)));
  }
  return out;
}

function alertOf(report: Report, state: 'open' | 'resolved'): AlertRecord {
  return {
    id: `a-${report.target}`,
    check: report.kind,
    target: report.target,
    kind: 'drift',
    state,
    openedAt: Date.UTC(2026, 10, 30, 3),
    lastSeenAt: Date.UTC(2026, 10, 30, 4),
    ...(state === 'resolved' ? { resolvedAt: Date.UTC(2026, 10, 30, 4, 30) } : {}),
    reopened: 2,
    status: report.status,
    verdict: report.verdict,
    findings: report.findings,
    members: report.findings.map((f, i) => ({ fingerprint: `f${i}`, code: f.code, subject: f.subject, digest: 'd', since: 0 })),
  };
}

describe('the message budget over generated worlds', () => {
  it('covers 1 to 1,000 machines, 1 to 200 targets and every documented finding code', () => {
    const worlds = [...SEEDS.map((s) => generateWorld(s)), ...EXTREMES.map((shape, i) => generateWorld(77 + i, shape))];
    expect(Math.min(...worlds.map((w) => w.targets))).toBe(1);
    expect(Math.max(...worlds.map((w) => w.targets))).toBe(200);
    expect(Math.max(...worlds.map((w) => w.machines))).toBe(1000);
    const seen = new Set(worlds.flatMap((w) => w.reports.flatMap((r) => r.findings.map((f) => f.code))));
    for (const code of documentedFindingCodes()) expect(seen, code).toContain(code);
  });

  it.each([...SEEDS.map((seed) => ({ seed, shape: {} })), ...EXTREMES.map((shape, i) => ({ seed: 77 + i, shape }))])(
    'world $seed $shape: every payload passes the check the Slack emulator enforces, before and after the budget',
    ({ seed, shape }) => {
      const world = generateWorld(seed, shape);
      for (const payload of payloadsOf(world.reports)) {
        expect(checkMessage(payload)).toBeUndefined();
        expect(checkMessage(fitMessage(payload))).toBeUndefined();
      }
    },
  );
});

describe('fitMessage', () => {
  const section = (text: string): SectionBlock => ({ type: 'section', text: { type: 'mrkdwn', text } });

  it('brings any payload within the limits and says what it left out', () => {
    const huge: Payload = {
      text: 'T'.repeat(50_000),
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'H'.repeat(400) } },
        ...Array.from({ length: 80 }, (_, i) => section(`${i} `.repeat(2000))),
        { type: 'context', elements: Array.from({ length: 14 }, () => ({ type: 'mrkdwn', text: 'c'.repeat(2500) })) },
        { type: 'actions', elements: [{ type: 'button', action_id: 'a', text: { type: 'plain_text', text: 'B'.repeat(100) }, value: 'v' }] },
      ],
    };
    expect(checkMessage(huge)).toBeDefined();
    const fitted = fitMessage(huge);
    expect(checkMessage(fitted)).toBeUndefined();
    expect(fitted.text.length).toBeLessThanOrEqual(SLACK_MESSAGE_LIMITS.messageText);
    const blocks: KnownBlock[] = fitted.blocks ?? [];
    expect(blocks.at(-1)?.type).toBe('actions');
    expect(JSON.stringify(blocks.at(-2))).toMatch(/more blocks? did not fit in one Slack message/);
  });

  it('leaves a payload that fits as it is', () => {
    const small = { text: 'OK: fine', blocks: [section('all good')] };
    expect(fitMessage(small)).toEqual(small);
  });

  it('the plain fallback is short, has no blocks and names what Slack said', () => {
    const fallback = plainFallback({ text: `CRITICAL: 40 of 40 sites need attention\n${'x'.repeat(9000)}`, blocks: [section('x')] }, 'invalid_blocks');
    expect(fallback.blocks).toBeUndefined();
    expect(fallback.text).toMatch(/^CRITICAL: 40 of 40 sites need attention \(Slack refused the full message: invalid_blocks/);
    expect(fallback.text.length).toBeLessThan(1700);
  });
});
