import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuditLog, type AuditLog } from '../../src/engine/audit/audit-log.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createMetrics, type Metrics } from '../../src/engine/metrics.ts';
import { type SlackApp } from '../../src/edge/slack/app.ts';
import { metricsOutcome } from '../../src/edge/slack/command-result.ts';
import { commandName } from '../../src/edge/slack/invocation.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { capturedLog, recordingQueue, startHttpBot, type RecordingQueue } from './slack-harness.ts';

/*
 * One edge: each /maas is parsed once, authorized and dispatched, and what became of it is a
 * typed result that the audit trail and the metrics both read, never the reply's words.
 */

let emulator: SlackEmulator;
let bot: SlackApp | undefined;
let redis: Redis;
let prefix: string;
let audit: AuditLog;
let metrics: Metrics;
let appUrl: string;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS', 'C0OTHER'] });
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  prefix = freshPrefix('edge');
  audit = createAuditLog({ redis, key: `${prefix}:audit`, log: capturedLog().log, redact: (s) => s });
  metrics = createMetrics({ commandNames: ['help', 'sites', 'dns-check'] });
});

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await emulator.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function startBot(queue: RecordingQueue): Promise<void> {
  bot = await startHttpBot(emulator, queue.enqueue, { audit, onCommand: (invocation, result) => metrics.recordCommand(commandName(invocation), metricsOutcome(result)) });
  appUrl = `http://127.0.0.1:${bot.port}`;
}

async function commandCount(subcommand: string, outcome: string): Promise<number> {
  const { values } = await metrics.registry.getSingleMetric('maas_chatops_commands_total')!.get();
  return values.find((v) => v.labels.subcommand === subcommand && v.labels.outcome === outcome)?.value ?? 0;
}

/** Sends one command and waits until its answer is shown and its audit entry written. */
async function run(text: string, channel = 'C0OPS'): Promise<{ answer: string; entry: Awaited<ReturnType<AuditLog['latest']>>[number] }> {
  const before = (await audit.latest({ limit: 100 })).length;
  const sent = await emulator.sendSlashCommand({ appUrl, text, channel });
  const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { description: `the answer to ${text}` });
  for (let i = 0; i < 100 && (await audit.latest({ limit: 100 })).length === before; i++) await new Promise((r) => setTimeout(r, 20));
  const [entry] = await audit.latest({ limit: 1 });
  return { answer: answer.text, entry: entry! };
}

describe('one Slack edge: a typed result for the audit trail and the metrics', () => {
  it('a queue that fails makes the command failed in both, however its reply is worded', async () => {
    await startBot(recordingQueue(async () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6399'))));
    const { answer, entry } = await run('dns-check prod');
    expect(answer).toMatch(/^\/maas dns-check failed: the job queue is unavailable/);
    expect(entry).toMatchObject({ kind: 'command', action: 'dns-check', target: 'prod', outcome: 'failed' });
    expect(await commandCount('dns-check', 'error')).toBe(1);
    expect(await commandCount('dns-check', 'answered')).toBe(0);
  });

  it('queued, answered, usage, unknown and refused commands are each counted and audited as what they were', async () => {
    await startBot(recordingQueue());
    expect((await run('dns-check prod')).entry).toMatchObject({ action: 'dns-check', outcome: 'queued', jobId: 'job-1' });
    expect((await run('sites')).entry).toMatchObject({ action: 'sites', outcome: 'answered' });
    expect((await run('DNS-check')).entry).toMatchObject({ action: 'dns-check', outcome: 'answered' });
    expect((await run('bogus')).entry).toMatchObject({ action: 'bogus', outcome: 'answered' });
    expect((await run('dns-check prod', 'C0OTHER')).entry).toMatchObject({ kind: 'refusal', action: 'dns-check', outcome: 'refused' });
    expect((await run('sites\u200b')).entry).toMatchObject({ kind: 'refusal', action: '(unreadable input)', outcome: 'refused' });

    expect(await commandCount('dns-check', 'accepted')).toBe(1);
    expect(await commandCount('sites', 'answered')).toBe(1);
    expect(await commandCount('dns-check', 'usage')).toBe(1);
    expect(await commandCount('other', 'usage')).toBe(2);
    expect(await commandCount('dns-check', 'denied')).toBe(1);
  });
});
