import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { executeRepairJob } from '../jobs/repair-execute.ts';
import type { JobContext, JobDefinition, LockTuning, QueuedData } from '../src/engine/job-types.ts';
import { silentLogger } from '../src/core/log.ts';
import type { Notifier } from '../src/engine/notifier.ts';
import { JobQueues } from '../src/engine/queue/job-queues.ts';
import { startJobWorkers, type RunningWorkers } from '../src/engine/queue/job-workers.ts';
import { createRedis } from '../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../src/core/redact.ts';
import { executionJobId, REPAIR_EXECUTE_JOB, type ExecuteJobData } from '../src/engine/repair/execute-job-data.ts';
import type { RepairPlan } from '../src/engine/repair/plan.ts';
import { planReport } from '../src/engine/repair/plan.ts';
import { createPlanStore, type PlanStore, type StoredPlan } from '../src/engine/repair/plan-store.ts';
import type { Report } from '../src/core/report.ts';
import { startPrivateRedis, type RedisHandle } from './private-redis.ts';

/** What the workers said, as Slack would have shown it. */
export interface OutageTranscript {
  /** Thread replies under the plan message, in order. */
  thread: string[];
  /** The run's result, as the plan message shows it once edited with the results. */
  summaries: Report[][];
  errors: string[];
}

export interface OutageRig {
  redisUrl: string;
  prefix: string;
  /** A store on a connection of the rig's own. */
  plans: PlanStore;
  said: OutageTranscript;
  /** Stores the plan, approves it as a Slack approver would, and queues its execute job. */
  approveAndQueue(plan: RepairPlan): Promise<void>;
  /** SIGKILLs the private redis-server. */
  killRedis(): Promise<void>;
  /** Starts it again on the same port from its AOF; returns when it answers. */
  restartRedis(): Promise<void>;
  /** Starts one more worker process's worth of BullMQ workers (its own connection). */
  addWorker(): void;
  /** Waits until the plan is done or failed. */
  finished(planId: string, timeoutMs: number): Promise<StoredPlan>;
  close(): Promise<void>;
}

export interface OutageRigOptions {
  jobs: JobDefinition[];
  context: Pick<JobContext, 'config' | 'adapters'>;
  /** BullMQ lock tuning for the repair kinds (shrunk, so that an outage of seconds outlasts it). */
  lock: LockTuning;
  /** How many worker processes to imitate at the start (each its own connection and BullMQ workers); default 2. */
  workers?: number;
}

const CHANNEL = 'C0OUTAGE';

/**
 * A private redis-server with AOF (appendfsync always), BullMQ workers running repair jobs with a
 * recording notifier, and the means to kill Redis and bring it back: the rig of the exactly-once
 * tests and bench.
 */
export async function startOutageRig(options: OutageRigOptions): Promise<OutageRig> {
  const dir = mkdtempSync(join(tmpdir(), 'repair-outage-'));
  let redis: RedisHandle = await startPrivateRedis(undefined, { appendOnlyDir: dir });
  const port = Number(new URL(redis.url).port);
  const prefix = 'outage';
  const connections: Redis[] = [];
  const connect = (role: 'worker' | 'producer') => {
    const c = createRedis(redis.url, role);
    c.on('error', () => undefined);
    connections.push(c);
    return c;
  };
  const said: OutageTranscript = { thread: [], summaries: [], errors: [] };
  const notifier: Notifier = {
    postReports: async (_t, reports) => void said.summaries.push(reports),
    postError: async (_t, message) => void said.errors.push(message),
    postPlan: async (t) => ({ channel: t.channel, ts: '1700000000.000100' }),
    updatePlan: async (_r, view) => void (view.report.results && said.summaries.push([view.report])),
    postInThread: async (_r, text) => void said.thread.push(text),
  };
  const redact = createRedactor([]);
  const running: RunningWorkers[] = [];
  const addWorker = () => {
    const connection = connect('worker');
    running.push(
      startJobWorkers({
        connection,
        jobs: new Map<string, JobDefinition<QueuedData>>([...options.jobs, executeRepairJob].map((j) => [j.name, j])),
        context: { ...options.context, log: silentLogger(), plans: createPlanStore(connection, { prefix }), notifier },
        notifier,
        redact,
        prefix,
        concurrency: 1,
        lockOverride: options.lock,
      }),
    );
  };
  for (let i = 0; i < (options.workers ?? 2); i++) addWorker();
  const own = connect('worker');
  const plans = createPlanStore(own, { prefix });
  const queues = new JobQueues(connect('producer'), redact, prefix, 5_000);

  return {
    redisUrl: redis.url,
    prefix,
    plans,
    said,
    async approveAndQueue(plan) {
      await plans.create({ plan, report: planReport(plan, new Date()), requester: 'U0OPS1', channel: CHANNEL, now: Date.now(), ttlMs: 600_000 });
      await plans.setMessage(plan.id, '1700000000.000100');
      const decided = await plans.decide(plan.id, 'approved', 'U0LEAD2', Date.now());
      if (!decided.ok) throw new Error(`could not approve plan ${plan.id}: ${decided.why}`);
      const stored = await plans.get(plan.id);
      const data: ExecuteJobData = { planId: plan.id, approvedBy: 'U0LEAD2' };
      await queues.enqueue(REPAIR_EXECUTE_JOB, data, { jobId: executionJobId(plan.id, stored?.decidedAt) });
    },
    async killRedis() {
      await redis.kill?.();
    },
    async restartRedis() {
      redis = await startPrivateRedis(port, { appendOnlyDir: dir });
    },
    addWorker,
    async finished(planId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const stored = await plans.get(planId);
        if (stored && (stored.state === 'done' || stored.state === 'failed')) return stored;
        if (Date.now() > deadline) throw new Error(`plan ${planId} did not finish within ${timeoutMs} ms (state ${stored?.state ?? 'missing'}); thread: ${said.thread.join(' | ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      await Promise.all(running.map((r) => Promise.race([r.close(), new Promise((ok) => setTimeout(ok, 3_000))])));
      await queues.close().catch(() => undefined);
      for (const c of connections) c.disconnect();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
