/**
 * A worker process for fix-resolver-crash.test.ts: runs the execute phase of an approved
 * fix-resolver plan with the Redis journal, as a BullMQ worker would, so the test can SIGKILL it
 * while rack.forwarderInstall runs. Started with `node --import tsx`; it reads everything from the environment.
 */
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import type { Adapters } from '../../src/adapters.ts';
import { parseConfigText, type Config } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { createMaasClient } from '../../src/maas/client.ts';
import type { Notifier } from '../../src/notifier.ts';
import { createRedis } from '../../src/queue/redis-connection.ts';
import { createPlanStore } from '../../src/repair/plan-store.ts';
import { createSshConnector } from '../../src/ssh/connector.ts';

const required = (name: string): string => {
  const value = process.env[name];
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
const [report] = await fixResolverJob.run(
  { config, adapters, log: silentLogger(), plans, notifier },
  { target: 'site-b', phase: 'execute', planId: required('CRASH_PLAN'), approvedBy: 'U0LEAD2' },
);
say(`done: ${JSON.stringify(report?.results?.map((r) => r.outcome))}`);
redis.disconnect();
process.exit(0);
