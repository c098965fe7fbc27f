import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Notifier, ReplyTarget } from '../../src/engine/notifier.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Report } from '../../src/core/report.ts';
import { ChatopsError } from '../../src/core/errors.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

class RecordingNotifier implements Notifier {
  reports: { target: ReplyTarget; reports: Report[] }[] = [];
  errors: { target: ReplyTarget; message: string }[] = [];
  async postReports(target: ReplyTarget, reports: Report[]) {
    this.reports.push({ target, reports });
  }
  async postError(target: ReplyTarget, message: string) {
    this.errors.push({ target, message });
  }
}

const { config } = parseConfigText('{}', { path: 't.yaml', env: {} });
const noAdapters = {} as Adapters;
const redact = createRedactor(['the-secret-canary-123']);

describe('queue and workers on real Redis', () => {
  let redis: Redis;
  let producer: Redis;
  let queues: JobQueues;
  let running: RunningWorkers | undefined;
  let prefix: string;

  async function setup(jobs: JobDefinition[]) {
    prefix = freshPrefix('queue');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    producer = createRedis(TEST_REDIS_URL, 'producer');
    queues = new JobQueues(producer, redact, prefix);
    const notifier = new RecordingNotifier();
    running = startJobWorkers({
      connection: redis,
      jobs: new Map(jobs.map((j) => [j.name, j])),
      context: { config, adapters: noAdapters, log: silentLogger() },
      notifier,
      redact,
      prefix,
    });
    return notifier;
  }

  afterEach(async () => {
    await running?.close();
    await queues.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    producer.disconnect();
  });

  it('runs an enqueued job once and delivers its report to the reply target', async () => {
    let runs = 0;
    const echo: JobDefinition = {
      name: 'echo',
      run: async (_ctx, data) => {
        runs++;
        return [finishReport({ kind: 'dns-check', target: data.target, verdict: 'healthy', findings: [] }, new Date())];
      },
    };
    const notifier = await setup([echo]);
    await queues.enqueue('echo', { target: 'prod', reply: { channel: 'C1', user: 'U1' } });
    await waitUntil(() => notifier.reports.length === 1);
    expect(runs).toBe(1);
    expect(notifier.reports[0]?.target).toEqual({ channel: 'C1', user: 'U1' });
    expect(notifier.reports[0]?.reports[0]).toMatchObject({ target: 'prod', status: 'ok', verdict: 'healthy' });
  });

  it('redacts a secret that a job put in its report', async () => {
    const leaky: JobDefinition = {
      name: 'leaky',
      run: async (_ctx, data) => [finishReport({ kind: 'dns-check', target: data.target, verdict: 'saw the-secret-canary-123', findings: [] }, new Date())],
    };
    const notifier = await setup([leaky]);
    await queues.enqueue('leaky', { target: 'prod', reply: { channel: 'C1' } });
    await waitUntil(() => notifier.reports.length === 1);
    expect(JSON.stringify(notifier.reports)).not.toContain('the-secret-canary-123');
  });

  it('refuses to queue job data that holds a secret', async () => {
    await setup([]);
    await expect(queues.enqueue('echo', { target: 'the-secret-canary-123' })).rejects.toThrow(/holds a secret/);
  });

  it('fails a permanent error at once and tells the requester', async () => {
    let runs = 0;
    const bad: JobDefinition = {
      name: 'bad',
      run: async () => {
        runs++;
        throw new ChatopsError('UNKNOWN_TARGET', 'no cluster "x"', { hint: 'known clusters: prod' });
      },
    };
    const notifier = await setup([bad]);
    await queues.enqueue('bad', { target: 'x', reply: { channel: 'C1' } });
    await waitUntil(() => notifier.errors.length === 1);
    expect(runs).toBe(1);
    expect(notifier.errors[0]?.message).toBe('bad x failed: no cluster "x". known clusters: prod');
  });

  it('retries a transient failure and then succeeds', async () => {
    let runs = 0;
    const flaky: JobDefinition = {
      name: 'flaky',
      run: async (_ctx, data) => {
        runs++;
        if (runs === 1) throw new Error('connection reset');
        return [finishReport({ kind: 'mac-diff', target: data.target, verdict: 'ok', findings: [] }, new Date())];
      },
    };
    const notifier = await setup([flaky]);
    await queues.enqueue('flaky', { target: 'site-b', reply: { channel: 'C1' } }, { attempts: 2 });
    await waitUntil(() => notifier.reports.length === 1, 15_000);
    expect(runs).toBe(2);
    expect(notifier.errors).toEqual([]);
  });
});
