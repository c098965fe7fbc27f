import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { ChatopsError } from '../../src/core/errors.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Notifier, ReplyTarget } from '../../src/engine/notifier.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { finishReport, type Report } from '../../src/core/report.ts';
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
const redact = createRedactor([]);
const CHECK = 'quick-check';

/** The join/close race at the queue level: requests keep arriving while groups close and reopen. */
describe('dedup: no requester is lost or posted twice while groups open and close', () => {
  let redis: Redis;
  let producer: Redis;
  let queues: JobQueues;
  let running: RunningWorkers | undefined;
  let prefix: string;

  function setup(job: JobDefinition, concurrency = 1): RecordingNotifier {
    prefix = freshPrefix('dedup-race');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    producer = createRedis(TEST_REDIS_URL, 'producer');
    queues = new JobQueues(producer, redact, prefix, 5_000, { dedupJobs: new Set([CHECK]) });
    const notifier = new RecordingNotifier();
    running = startJobWorkers({ connection: redis, jobs: new Map([[job.name, job]]), context: { config, adapters: {} as Adapters, log: silentLogger() }, notifier, redact, prefix, concurrency });
    return notifier;
  }

  afterEach(async () => {
    await running?.close();
    await queues.close();
    await deletePrefix(redis, prefix);
    redis.disconnect();
    producer.disconnect();
  });

  it('300 requests for one check in 30 bursts: every channel gets exactly one result, and jobs = distinct ids', async () => {
    let runs = 0;
    const check: JobDefinition = {
      name: CHECK,
      run: async (_ctx, data) => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 5));
        return [finishReport({ kind: 'dns-check', target: data.target, verdict: 'healthy', findings: [] }, new Date())];
      },
    };
    const notifier = setup(check);
    const ids = new Set<string>();
    let joined = 0;
    for (let burst = 0; burst < 30; burst++) {
      const submitted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => queues.submit(CHECK, { target: 'prod', reply: { channel: `C${burst * 10 + i}` }, requestedBy: `U${i}` })),
      );
      for (const s of submitted) {
        ids.add(s.id);
        if (s.joined) joined += 1;
      }
      await new Promise((r) => setTimeout(r, burst % 3));
    }
    await waitUntil(() => notifier.reports.length === 300, 20_000);
    await waitUntil(() => runs === ids.size);
    const channels = notifier.reports.map((r) => r.target.channel);
    expect(new Set(channels).size).toBe(300);
    expect(runs).toBe(ids.size);
    expect(joined).toBe(300 - ids.size);
    expect(joined).toBeGreaterThan(0);
    // Groups closed and reopened during the bursts: the race between joining and closing was exercised.
    expect(ids.size).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(notifier.reports).toHaveLength(300);
  });

  it('a check that fails for good tells every waiting channel once, and one channel once however many asked there', async () => {
    let runs = 0;
    const broken: JobDefinition = {
      name: CHECK,
      run: async () => {
        runs += 1;
        throw new ChatopsError('UNKNOWN_TARGET', 'no cluster "prod"');
      },
    };
    // Workers start after the requests, so that all of them join one queued job.
    prefix = freshPrefix('dedup-race');
    redis = createRedis(TEST_REDIS_URL, 'worker');
    producer = createRedis(TEST_REDIS_URL, 'producer');
    queues = new JobQueues(producer, redact, prefix, 5_000, { dedupJobs: new Set([CHECK]) });
    const requests = [
      { channel: 'C1', user: 'U1' },
      { channel: 'C1', user: 'U2' },
      { channel: 'C2', user: 'U3' },
      { channel: 'C1', user: 'U4', threadTs: '1.000100' },
    ];
    const submitted = await Promise.all(requests.map((reply) => queues.submit(CHECK, { target: 'prod', reply, requestedBy: reply.user })));
    expect(new Set(submitted.map((s) => s.id)).size).toBe(1);
    const notifier = new RecordingNotifier();
    running = startJobWorkers({ connection: redis, jobs: new Map([[CHECK, broken]]), context: { config, adapters: {} as Adapters, log: silentLogger() }, notifier, redact, prefix });
    await waitUntil(() => notifier.errors.length === 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toBe(1);
    expect(notifier.errors.map((e) => `${e.target.channel}/${e.target.threadTs ?? ''}`).sort()).toEqual(['C1/', 'C1/1.000100', 'C2/']);
    for (const e of notifier.errors) expect(e.message).toContain('no cluster "prod"');
  });

  it('dedup: false queues a job of its own', async () => {
    const check: JobDefinition = { name: CHECK, run: async () => [] };
    setup(check);
    await running!.close();
    running = undefined;
    const a = await queues.submit(CHECK, { target: 'prod' });
    const b = await queues.submit(CHECK, { target: 'prod' }, { dedup: false });
    const c = await queues.submit(CHECK, { target: 'prod' });
    expect(b.id).not.toBe(a.id);
    expect(c.joined?.id).toBe(a.id);
  });
});
