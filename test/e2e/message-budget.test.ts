import type { Redis } from 'ioredis';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runLab } from '../../lab/run-lab.ts';
import { blocksText } from '../../lab/transcript.ts';
import { ANSWER_LIMITS } from '../../src/edge/slack/answer-render.ts';
import { wordCount } from '../../src/edge/slack/say-less.ts';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { createMetrics } from '../../src/engine/metrics.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport } from '../../src/core/report.ts';
import { type SlackApp } from '../../src/edge/slack/app.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';
import { capturedLog, recordingQueue, startHttpBot, testConfig } from './slack-harness.ts';

let emulator: SlackEmulator;

beforeEach(async () => {
  emulator = await startSlackEmulator({ channels: ['C0OPS'] });
});
afterEach(async () => {
  await emulator.close();
});

const critical = (target: string) =>
  finishReport(
    {
      kind: 'dns-check',
      target,
      verdict: `${target}-k8s.maas resolves to nothing`,
      findings: [{ code: 'DNS_RECORD_EMPTY', severity: 'critical', subject: `${target}-k8s.maas`, summary: 'no A record', evidence: { recorded: [], desired: ['10.0.0.5'] } }],
    },
    new Date(),
  );

describe('when Slack still refuses a message', () => {
  let redis: Redis | undefined;
  let producer: Redis | undefined;
  let queues: JobQueues | undefined;
  let workers: RunningWorkers | undefined;
  let prefix = '';

  afterEach(async () => {
    await workers?.close();
    await queues?.close();
    if (redis) await deletePrefix(redis, prefix);
    redis?.disconnect();
    producer?.disconnect();
    workers = undefined;
  });

  async function startWorker(job: JobDefinition, onFallback?: (reason: string) => void) {
    prefix = freshPrefix('budget');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    producer = createRedis(TEST_REDIS_URL, 'producer');
    const redact = createRedactor([]);
    queues = new JobQueues(producer, redact, prefix);
    const captured = capturedLog();
    const notifier = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact, log: captured.log, retryConfig: { retries: 0 }, ...(onFallback ? { onFallback } : {}) });
    workers = startJobWorkers({ connection: redis, jobs: new Map([[job.name, job]]), context: { config: testConfig(), adapters: {} as Adapters, log: captured.log }, notifier, redact, prefix });
    return captured;
  }

  it('posts a short plain fallback once, logs it, counts it in the metrics, and runs the check once', async () => {
    let runs = 0;
    const check: JobDefinition = { name: 'dns-check', run: async (_ctx, data) => (runs++, [critical(data.target)]) };
    const metrics = createMetrics({ defaultMetrics: false });
    const { lines } = await startWorker(check, (reason) => metrics.recordSlackFallback(reason));
    emulator.refuseNext(1, 'invalid_blocks', 'chat.postMessage');

    await queues!.enqueue('dns-check', { target: 'prod', reply: { channel: 'C0OPS', user: 'U0OPS1' } });
    const posted = await emulator.waitFor((e) => e.channelMessages('C0OPS')[0], { description: 'the fallback' });

    expect(posted.blocks).toBeUndefined();
    expect(posted.text).toMatch(/^CRITICAL: prod-k8s\.maas resolves to nothing \(Slack refused the full message: invalid_blocks\. The CLI with --json has all of it\.\)$/);
    const refused = emulator.calls.filter((c) => c.method === 'chat.postMessage' && c.response.ok === false);
    expect(refused).toHaveLength(1);
    expect(lines.some((l) => l.slackError === 'invalid_blocks' && /plain fallback/.test(String(l.msg)))).toBe(true);
    expect(await metrics.text()).toMatch(/maas_chatops_slack_fallbacks_total\{reason="invalid_blocks"\} 1/);
    await waitUntil(async () => (await queues!.queue('dns-check').getJobCounts('completed')).completed === 1);
    expect(runs).toBe(1);
  });

  it('a post that fails outright is logged; the job completes and the check is not run again', async () => {
    let runs = 0;
    const check: JobDefinition = { name: 'dns-check', run: async (_ctx, data) => (runs++, [critical(data.target)]) };
    const { lines } = await startWorker(check);

    await queues!.enqueue('dns-check', { target: 'prod', reply: { channel: 'C0GONE', user: 'U0OPS1' } });
    await waitUntil(async () => (await queues!.queue('dns-check').getJobCounts('completed')).completed === 1);

    expect(runs).toBe(1);
    expect(emulator.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
    expect(lines.some((l) => /not run again/.test(String(l.msg)))).toBe(true);
  });
});

describe('command answers through the real Bolt app', () => {
  let bot: SlackApp | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('fall back to plain text when both the response_url and the Web API refuse the blocks', async () => {
    const fallbacks: string[] = [];
    bot = await startHttpBot(emulator, recordingQueue().enqueue, { onSlackFallback: (reason) => fallbacks.push(reason) });
    emulator.refuseNext(1, 'invalid_blocks', 'response_url');
    emulator.refuseNext(1, 'msg_blocks_too_long', 'chat.postEphemeral');

    await emulator.sendSlashCommand({ appUrl: `http://127.0.0.1:${bot.port}`, text: 'help' });
    const answer = await emulator.waitFor((e) => e.channelMessages('C0OPS').find((m) => m.via === 'chat.postEphemeral'), { description: 'the fallback answer' });

    expect(answer.text).toMatch(/\(Slack refused the full message: msg_blocks_too_long\. The CLI with --json has all of it\.\)$/);
    expect(answer.ephemeral).toBe(true);
    expect(fallbacks).toEqual(['msg_blocks_too_long']);
  });
});

describe('every message the lab posts says its verdict and its next step in few words', () => {
  let lab: SlackEmulator | undefined;
  beforeAll(async () => {
    const code = await runLab({ env: { REDIS_URL: TEST_REDIS_URL }, out: () => undefined, err: () => undefined }, (_step, _i, e) => {
      lab = e;
    });
    expect(code).toBe(0);
  }, 150_000);

  /** A verdict line: `:icon: *WORD* · kind target: …`; the words after the status word are counted. */
  const VERDICT = /^:\w+: \*[A-Z]+\* · /;
  const NEXT = '*Next step:* ';

  it('a verdict line and a *Next step* line are each at most ANSWER_LIMITS.words words, in every message as posted and as edited', () => {
    const contents = lab!.messages.flatMap((m) => [m.original, ...m.updates]).filter((c) => c.blocks?.length);
    const lines = contents.flatMap((c) => blocksText(c.blocks!));
    const verdicts = lines.filter((l) => VERDICT.test(l));
    const steps = lines.filter((l) => l.startsWith(NEXT));
    // The lab's answers, plans, alerts and the Alertmanager answer: dozens of each.
    expect(verdicts.length).toBeGreaterThan(30);
    expect(steps.length).toBeGreaterThanOrEqual(8);
    for (const l of verdicts) expect(wordCount(l.replace(VERDICT, '')), l).toBeLessThanOrEqual(ANSWER_LIMITS.words);
    for (const l of steps) expect(wordCount(l.slice(NEXT.length)), l).toBeLessThanOrEqual(ANSWER_LIMITS.words);
  });
});
