import { LogLevel, WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobData } from '../../src/engine/job-types.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import type { ReplyTarget } from '../../src/engine/notifier.ts';
import { finishReport, type Report } from '../../src/core/report.ts';
import type { PlanMessageView } from '../../src/engine/repair/plan-view.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { type SlackApp } from '../../src/edge/slack/app.ts';
import { createSlackNotifier, SlackDeliveryError, type SlackNotifierOptions } from '../../src/edge/slack/notifier.ts';
import { createMetrics } from '../../src/engine/metrics.ts';
import { capturedLog, recordingQueue, startHttpBot, testConfig, TEST_CONFIG_YAML, type CapturedLog } from './slack-harness.ts';

/*
 * One visible message per command, under Slack's rules (docs/slack-behaviour.md): the bot posts a
 * check's "running, the result will be posted here" answer as its own message and the result
 * edits it (a slash command's response_url cannot replace, S-RESPONSE-URL-REPLACE); the details
 * of an `all` run go in that message's thread. Where the bot cannot post (a private channel it is
 * not in) the running note goes to the requester alone and the result through the response_url.
 */

const PRIVATE = 'C0PRIV';
let emulator: SlackEmulator;
let bot: SlackApp | undefined;
let queued: { jobName: string; data: JobData }[];
let workerLog: CapturedLog;

async function start(): Promise<void> {
  emulator = await startSlackEmulator({ conversations: [{ id: 'C0OPS' }, { id: PRIVATE, private: true, member: false }] });
  const queue = recordingQueue();
  queued = queue.calls;
  const config = testConfig(TEST_CONFIG_YAML.replace('commandChannels: [C0OPS]', `commandChannels: [C0OPS, ${PRIVATE}]`));
  bot = await startHttpBot(emulator, queue.enqueue, { config });
  workerLog = capturedLog();
}

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await emulator.close();
});

/** The worker's side: its own gateway to the same Slack, sharing the bot's answer board (Redis in production). */
function worker(extra: Pick<SlackNotifierOptions, 'onDetailsWithheld'> = {}) {
  return createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: (s) => s, log: workerLog.log, retryConfig: { retries: 0 }, threadIntervalMs: 0, answers: bot!.gateway.answers, ...extra });
}

function report(target: string, failing: boolean): Report {
  return finishReport(
    {
      kind: 'resolver-check',
      target,
      verdict: failing ? `The resolver of ${target} answers SERVFAIL for maas-internal SOA` : `The resolver of ${target} answers maas-internal`,
      findings: failing
        ? [{ code: 'RESOLVER_SERVFAIL', severity: 'critical', subject: target, summary: `the rack of ${target} answers SERVFAIL`, evidence: { resolver: '10.0.0.2', zone: 'maas-internal' } }]
        : [{ code: 'RESOLVER_OK', severity: 'info', subject: target, summary: 'answers', evidence: { serial: 7 } }],
    },
    new Date(),
  );
}

/** Types a check in `channel` and waits for its "running" answer; returns where the worker will post. */
async function ask(text: string, channel = 'C0OPS'): Promise<ReplyTarget> {
  const sent = await emulator.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot!.port}`, text, channel });
  await emulator.waitFor((e) => e.answersTo(sent.responseUrl).find((m) => /running, the result will be posted here/.test(m.text)), { description: 'the running answer' });
  return queued.at(-1)!.data.reply!;
}

const visibleIn = (channel: string) => emulator.channelMessages(channel).filter((m) => !m.threadTs && !m.ephemeral && !m.deleted);

describe('one visible message per command', () => {
  it('the result of a check edits its running answer, the bot\'s own message: one message, showing the result', async () => {
    await start();
    const startedWith = emulator.calls.length;
    const reply = await ask('dns-check prod');
    await worker().postReports(reply, [report('prod', true)]);

    expect(visibleIn('C0OPS')).toHaveLength(1);
    const [message] = visibleIn('C0OPS');
    expect(message!.via).toBe('chat.postMessage');
    expect(message!.original.text).toMatch(/asked for `dns-check prod`: running, the result will be posted here\./);
    expect(message!.text).toBe('CRITICAL: The resolver of prod answers SERVFAIL for maas-internal SOA');
    expect(message!.updates.map((u) => u.via)).toEqual(['chat.update']);
    // Nothing read the channel back to find the answer.
    expect(emulator.calls.slice(startedWith).filter((c) => c.method === 'conversations.history')).toHaveLength(0);
  });

  it('an all run: the summary edits the running message and the details go in its thread', async () => {
    await start();
    const reply = await ask('resolver-check all');
    await worker().postReports(reply, [report('site-a', true), report('site-b', false), report('site-c', true)]);

    expect(visibleIn('C0OPS')).toHaveLength(1);
    const [summary] = visibleIn('C0OPS');
    expect(summary!.text).toBe('CRITICAL: 2 of 3 targets need attention (resolver-check all)');
    const thread = emulator.channelMessages('C0OPS').filter((m) => m.threadTs === summary!.ts);
    expect(thread.map((m) => m.text.match(/site-[a-c]/)?.[0])).toEqual(['site-a', 'site-c']);
  });

  it('a failed check edits the running answer into the error, its blocks cleared', async () => {
    await start();
    const reply = await ask('dns-check prod');
    await worker().postError(reply, 'dns-check prod failed: MAAS did not answer');
    expect(visibleIn('C0OPS')).toHaveLength(1);
    expect(visibleIn('C0OPS')[0]!.text).toBe(':x: dns-check prod failed: MAAS did not answer');
    expect(visibleIn('C0OPS')[0]!.blocks).toBeUndefined();
  });

  it('a plan\'s Approve buttons: an update that leaves out blocks keeps them, the bot\'s plain fallback sends blocks: [] and they are gone', async () => {
    await start();
    const notifier = worker();
    const view: PlanMessageView = { planId: 'abcdef0123456789', report: { ...report('prod', true), kind: 'fix-dns', plan: { id: 'abcdef0123456789', steps: [{ subject: 'prod', action: 'set-resolver', detail: '10.0.0.2 → 10.0.0.3' }] } }, state: 'pending', requester: 'U0OPS1', expiresAt: Date.now() + 600_000, approvable: true };
    const kept = await notifier.postPlan!({ channel: 'C0OPS', user: 'U0OPS1' }, view);
    const cleared = await notifier.postPlan!({ channel: 'C0OPS', user: 'U0OPS1' }, view);
    const approveButtons = (ts: string) => JSON.stringify(emulator.channelMessages('C0OPS').find((m) => m.ts === ts)!.blocks ?? []).split(`"action_id":"${APPROVE_ACTION}"`).length - 1;
    expect([approveButtons(kept.ts), approveButtons(cleared.ts)]).toEqual([1, 1]);

    // Slack's rule: an update without `blocks` keeps the old ones, Approve included.
    const raw = new WebClient(emulator.botToken, { slackApiUrl: emulator.apiUrl, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 } });
    await raw.chat.update({ channel: 'C0OPS', ts: kept.ts, text: 'plan expired' });
    // The bot: Slack refuses the plan's new blocks, and the plain fallback that replaces them clears the buttons.
    emulator.refuseNext(1, 'invalid_blocks', 'chat.update');
    await notifier.updatePlan!(cleared, { ...view, state: 'expired' });

    expect([approveButtons(kept.ts), approveButtons(cleared.ts)]).toEqual([1, 0]);
    const fallback = emulator.calls.filter((c) => c.method === 'chat.update' && c.params.ts === cleared.ts).at(-1)!;
    expect([fallback.status, fallback.params.blocks]).toEqual([200, '[]']);
    expect(emulator.channelMessages('C0OPS').find((m) => m.ts === cleared.ts)!.text).toMatch(/Slack refused the full message: invalid_blocks/);
  });

  it('a result longer than chat.update takes (4,000 characters) still edits the running answer, clipped, and says it was cut', async () => {
    await start();
    const reply = await ask('dns-check prod');
    const zones = Array.from({ length: 400 }, (_, i) => `zone-${i}.maas-internal`).join(' ');
    expect(zones.length).toBeGreaterThan(8_000);
    await worker().postError(reply, `dns-check prod failed: SERVFAIL for ${zones}`);

    // One message, edited once and taken by Slack: not refused (msg_too_long) and replaced by the plain fallback.
    const [message] = visibleIn('C0OPS');
    expect(visibleIn('C0OPS')).toHaveLength(1);
    expect(emulator.calls.filter((c) => c.method === 'chat.update').map((c) => c.status)).toEqual([200]);
    expect(message!.text.length).toBeLessThanOrEqual(4_000);
    expect(message!.text.length).toBeGreaterThan(3_900);
    expect(message!.text).toMatch(/^:x: dns-check prod failed: SERVFAIL for zone-0\.maas-internal zone-1\.maas-internal/);
    expect(message!.text).toMatch(/…$/);
    expect(message!.text).not.toMatch(/Slack refused/);
  });

  it('a running answer Slack will not let the bot edit: the result is a new post, and the log says why', async () => {
    await start();
    const reply = await ask('dns-check prod');
    emulator.refuseNext(1, 'cant_update_message', 'chat.update');
    await worker().postReports(reply, [report('prod', true)]);

    expect(visibleIn('C0OPS').map((m) => m.text)).toEqual([expect.stringMatching(/running, the result will be posted here/), 'CRITICAL: The resolver of prod answers SERVFAIL for maas-internal SOA']);
    expect(workerLog.lines.map((l) => l.msg)).toContain('could not edit the running answer: the result is posted as a new message');
  });

  it('a private channel without the bot: the running note reaches the requester alone, the result the channel through the response_url', async () => {
    await start();
    const reply = await ask('dns-check prod', PRIVATE);
    await worker().postReports(reply, [report('prod', true)]);

    const answers = emulator.answersTo(reply.responseUrl!);
    expect(answers.slice(0, 2).map((m) => [m.ephemeral, m.text])).toEqual([
      [true, expect.stringMatching(/asked for `dns-check prod`: running/)],
      [false, 'CRITICAL: The resolver of prod answers SERVFAIL for maas-internal SOA'],
    ]);
    // No thread there: the evidence follows as the answer's long form, through the same URL; nothing else is shown.
    expect(visibleIn(PRIVATE).every((m) => m.via === 'response_url' && !m.ephemeral)).toBe(true);
    expect(visibleIn(PRIVATE).length).toBeLessThanOrEqual(2);
  });

  it('an all run in a private channel without the bot: the one answer says the details are in the CLI or to invite the bot, and the log and the count say they were not posted', async () => {
    await start();
    const metrics = createMetrics({ defaultMetrics: false });
    const reply = await ask('resolver-check all', PRIVATE);
    await worker({ onDetailsWithheld: (n) => metrics.recordSlackDetailsWithheld(n) }).postReports(reply, [report('site-a', true), report('site-b', false), report('site-c', true)]);

    const shown = emulator.answersTo(reply.responseUrl!).filter((m) => !m.ephemeral);
    expect(shown.map((m) => m.text)).toEqual([expect.stringMatching(/^CRITICAL: 2 of 3 targets need attention \(resolver-check all\)\n/)]);
    const note = 'The details of the 2 failing targets cannot follow in a thread: the bot is not in this channel. Run `maas-chatops resolver-check all --json` in a terminal for them, or type `/invite @maas` here.';
    expect(shown[0]!.text).toContain(note);
    expect(JSON.stringify(shown[0]!.blocks)).toContain(JSON.stringify(note).slice(1, -1));
    expect(workerLog.lines.filter((l) => l.level === 40 && l.targets === 2).map((l) => l.msg)).toEqual([expect.stringMatching(/^no thread for the details of an all run/)]);
    expect(await metrics.text()).toMatch(/^maas_chatops_slack_details_withheld_total 2$/m);
  });

  it('a private channel whose response_url is used up: the result cannot be shown, and the error says why', async () => {
    await start();
    const reply = await ask('dns-check prod', PRIVATE);
    for (let i = 0; i < 4; i++) await fetch(reply.responseUrl!, { method: 'POST', body: JSON.stringify({ response_type: 'ephemeral', text: `note ${i}` }) });
    const error = await worker()
      .postReports(reply, [report('prod', true)])
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SlackDeliveryError);
    expect(error).toMatchObject({ slackError: 'channel_not_found' });
    expect(workerLog.lines.map((l) => l.msg)).toContain('the response_url is used up or expired: the result is posted through the Web API');
    expect(visibleIn(PRIVATE)).toHaveLength(0);
  });

  it('no response_url (a scan, the CLI, an old job): a new post as before', async () => {
    await start();
    await worker().postReports({ channel: 'C0OPS', user: 'U0OPS1' }, [report('prod', false)]);
    expect(visibleIn('C0OPS').map((m) => m.via)).toEqual(['chat.postMessage']);
  });
});
