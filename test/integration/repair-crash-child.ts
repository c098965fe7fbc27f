/**
 * A worker process for the crash tests: runs the execute job of an approved repair plan (of any
 * kind) with the Redis journal, as a BullMQ worker would, so a test can SIGKILL it mid-plan. With CRASH_MODE=worker it is a BullMQ worker itself
 * (CRASH_LOCK: the lock tuning as JSON) and runs whatever execute job is queued, until killed.
 * Started with `node --import tsx`; everything it needs comes from the environment.
 */
import { executeRepairJob } from '../../jobs/repair-execute.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import type { Notifier } from '../../src/engine/notifier.ts';
import { startJobWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';

const env = process.env;
const required = (name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const { config } = parseConfigText(required('CRASH_CONFIG'), { path: 'crash.yaml', env: JSON.parse(required('CRASH_CONFIG_ENV')) as NodeJS.ProcessEnv });
const adapters: Adapters = {
  maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0 }),
  kube: () => {
    throw new Error('no kube here');
  },
  ssh: createSshConnector(),
};
const redis = createRedis(required('CRASH_REDIS_URL'), 'worker');
const say = (line: string): void => void process.stdout.write(`${line}\n`);
const notifier: Notifier = {
  postReports: async () => undefined,
  postError: async (_t, message) => say(`error: ${message}`),
  postPlan: async (target) => ({ channel: target.channel, ts: '0' }),
  updatePlan: async () => undefined,
  postInThread: async (_ref, text) => say(`thread: ${text}`),
};
const plans = createPlanStore(redis, { prefix: required('CRASH_PREFIX') });
const context = { config, adapters, log: silentLogger(), plans, notifier };
if (env.CRASH_MODE === 'worker') {
  redis.on('error', () => undefined);
  startJobWorkers({ connection: redis, jobs: new Map([[executeRepairJob.name, executeRepairJob]]), context, notifier, redact: createRedactor([]), prefix: required('CRASH_PREFIX'), concurrency: 1, lockOverride: JSON.parse(required('CRASH_LOCK')) });
  say('worker: started');
} else {
  // A short lease, so that the run after the SIGKILL takes over within seconds, as the next BullMQ run would after the lock.
  const [report] = await executeRepairJob.run({ ...context, job: { lockDurationMs: Number(env.CRASH_LEASE_MS ?? 2_000) } }, { planId: required('CRASH_PLAN'), approvedBy: 'U0LEAD2' });
  say(`done: ${JSON.stringify(report?.results?.map((r) => r.outcome))}`);
  redis.disconnect();
  process.exit(0);
}
