import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobData } from '../../src/engine/job-types.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import type { ReplyTarget } from '../../src/engine/notifier.ts';
import { finishReport, type Report } from '../../src/core/report.ts';
import { type SlackApp } from '../../src/edge/slack/app.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { capturedLog, recordingQueue, startHttpBot, type CapturedLog } from './slack-harness.ts';

/*
 * "Slack at incident scale", one top-level message per command: a check's "running, the result
 * will be posted here" answer is replaced by its result (through the command's response_url),
 * the details of an `all` run go in that message's thread, and only when the response_url cannot
 * be used any more does the result come as a new message (and the log says so).
 */

let emulator: SlackEmulator;
let bot: SlackApp | undefined;
let queued: { jobName: string; data: JobData }[];
let workerLog: CapturedLog;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
  const queue = recordingQueue();
  queued = queue.calls;
  bot = await startHttpBot(emulator, queue.enqueue);
  workerLog = capturedLog();
});

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await emulator.close();
});

/** The worker's side: the notifier a worker posts results with, speaking to the same Slack. */
function worker() {
  return createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact: (s) => s, log: workerLog.log, retryConfig: { retries: 0 }, threadIntervalMs: 0 });
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

/** Types a check in the channel and waits for its "running" answer; returns where the worker will post. */
async function ask(text: string): Promise<ReplyTarget> {
  const sent = await emulator.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot!.port}`, text });
  await emulator.waitFor((e) => e.answersTo(sent.responseUrl).find((m) => /running, the result will be posted here/.test(m.text)), { description: 'the running answer' });
  const job = queued.at(-1)!;
  return job.data.reply!;
}

const topLevel = () => emulator.channelMessages('C0OPS').filter((m) => !m.threadTs && !m.ephemeral && !m.deleted);

describe('one top-level message per command', () => {
  it('the result of a check replaces its "running" answer: one message, showing the result', async () => {
    const reply = await ask('dns-check prod');
    await worker().postReports(reply, [report('prod', true)]);

    expect(topLevel()).toHaveLength(1);
    const [message] = topLevel();
    expect(message!.original.text).toMatch(/asked for `dns-check prod`: running, the result will be posted here\./);
    expect(message!.text).toBe('CRITICAL: The resolver of prod answers SERVFAIL for maas-internal SOA');
    expect(message!.updates.map((u) => u.via)).toEqual(['response_url']);
  });

  it('an all run: the summary replaces the running message and the details go in its thread', async () => {
    const reply = await ask('resolver-check all');
    const reports = [report('site-a', true), report('site-b', false), report('site-c', true)];
    await worker().postReports(reply, reports);

    expect(topLevel()).toHaveLength(1);
    const [summary] = topLevel();
    expect(summary!.text).toBe('CRITICAL: 2 of 3 targets need attention (resolver-check all)');
    const thread = emulator.channelMessages('C0OPS').filter((m) => m.threadTs === summary!.ts);
    expect(thread.map((m) => m.text.match(/site-[a-c]/)?.[0])).toEqual(['site-a', 'site-c']);
  });

  it('a failed check replaces the running answer with the error', async () => {
    const reply = await ask('dns-check prod');
    await worker().postError(reply, 'dns-check prod failed: MAAS did not answer');
    expect(topLevel()).toHaveLength(1);
    expect(topLevel()[0]!.text).toBe(':x: dns-check prod failed: MAAS did not answer');
  });

  it('an expired response_url: the result is a new post, and the log says why', async () => {
    const reply = await ask('dns-check prod');
    emulator.ageResponseUrl(reply.responseUrl!, 31 * 60_000);
    await worker().postReports(reply, [report('prod', true)]);

    expect(topLevel().map((m) => m.text)).toEqual([expect.stringMatching(/running, the result will be posted here/), 'CRITICAL: The resolver of prod answers SERVFAIL for maas-internal SOA']);
    expect(workerLog.lines.map((l) => l.msg)).toContain('the response_url is used up or expired: the result is posted as a new message');
  });

  it('a response_url used up (5 posts): the result is a new post, and the log says why', async () => {
    const reply = await ask('dns-check prod');
    for (let i = 0; i < 4; i++) await fetch(reply.responseUrl!, { method: 'POST', body: JSON.stringify({ response_type: 'ephemeral', text: `note ${i}` }) });
    await worker().postReports(reply, [report('prod', true)]);

    expect(topLevel()).toHaveLength(2);
    expect(topLevel()[1]!.via).toBe('chat.postMessage');
    expect(workerLog.lines.map((l) => l.msg)).toContain('the response_url is used up or expired: the result is posted as a new message');
  });

  it('a command older than its response_url lasts is not even tried through it', async () => {
    const reply = await ask('dns-check prod');
    await worker().postReports({ ...reply, askedAt: Date.now() - 40 * 60_000 }, [report('prod', false)]);
    expect(topLevel()).toHaveLength(2);
    expect(emulator.answersTo(reply.responseUrl!)).toHaveLength(1);
    expect(workerLog.lines.map((l) => l.msg)).toContain('the command is older than its response_url lasts: the result is posted as a new message');
  });

  it('no response_url (a scan, the CLI, an old job): a new post as before', async () => {
    await worker().postReports({ channel: 'C0OPS', user: 'U0OPS1' }, [report('prod', false)]);
    expect(topLevel().map((m) => m.via)).toEqual(['chat.postMessage']);
  });
});
