import { commandRouter } from '../../commands/dispatch.ts';
import type { Redis } from 'ioredis';
import { executeRepairJob } from '../../jobs/repair-execute.ts';
import type { JobDefinition, QueuedData } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import type { AuditInput } from '../../src/engine/audit/audit-entry.ts';
import type { AuditLog } from '../../src/engine/audit/audit-log.ts';
import type { Config } from '../../src/core/config.ts';
import { startSlackEmulator, type SlackEmulator, type SlackEmulatorOptions } from '../../lab/slack-emulator/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { startJobWorkers } from '../../src/engine/queue/job-workers.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createPlanStore, type PlanStore } from '../../src/engine/repair/plan-store.ts';
import { createSlackApp } from '../../src/edge/slack/app.ts';
import { alertActionHandlers } from '../../src/edge/slack/alert-actions.ts';
import { approvalHandlers } from '../../src/edge/slack/approvals.ts';
import { createSlackNotifier } from '../../src/edge/slack/notifier.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from './redis.ts';

export interface ApprovalStack {
  emulator: SlackEmulator;
  appUrl: string;
  /** What the approval handlers and the repair executor recorded in the audit trail. */
  audit: AuditInput[];
  plans: PlanStore;
  /** Moves the approval handlers' clock (expiry tests). */
  clock: { offsetMs: number };
}

/**
 * The whole approval path with real parts: the real Bolt app over signed HTTP, BullMQ on real
 * Redis, workers running the given repair jobs with the Slack notifier, and the Slack emulator.
 * Everything it starts is closed through `closers`.
 */
export async function startApprovalStack(options: {
  config: Config;
  adapters: Adapters;
  secrets: string[];
  jobs: JobDefinition[];
  channel: string;
  closers: (() => Promise<void>)[];
  /** More of the emulated workspace: user groups, scopes the app was not granted. */
  emulator?: Pick<SlackEmulatorOptions, 'userGroups' | 'missingScopes'>;
}): Promise<ApprovalStack> {
  const { config, closers } = options;
  const redact = createRedactor(options.secrets);
  const log = silentLogger();
  const emulator = await startSlackEmulator({ ...options.emulator, channels: [options.channel] });
  closers.push(() => emulator.close());
  const prefix = freshPrefix('approval');
  const redis: Redis = createRedis(TEST_REDIS_URL, 'worker');
  const producer: Redis = createRedis(TEST_REDIS_URL, 'producer');
  closers.push(async () => {
    await deletePrefix(redis, prefix);
    redis.disconnect();
    producer.disconnect();
  });
  const queues = new JobQueues(producer, redact, prefix);
  closers.push(() => queues.close());
  const audit: AuditInput[] = [];
  const auditLog = { record: async (entry: AuditInput) => void audit.push(entry) } as unknown as AuditLog;
  const notifier = createSlackNotifier({ token: emulator.botToken, slackApiUrl: emulator.apiUrl, redact, log, retryConfig: { retries: 0 } });
  const workers = startJobWorkers({
    connection: redis,
    // The run of an approved plan is on the execute job's queue, whichever repair it is.
    jobs: new Map<string, JobDefinition<QueuedData>>([...options.jobs, executeRepairJob].map((j) => [j.name, j])),
    context: { config, adapters: options.adapters, log, plans: createPlanStore(redis, { prefix }), notifier, audit: auditLog },
    notifier,
    redact,
    prefix,
  });
  closers.push(() => workers.close());
  const clock = { offsetMs: 0 };
  const plans = createPlanStore(producer, { prefix });
  const enqueue = (name: string, data: Parameters<JobQueues['enqueue']>[1], options?: Parameters<JobQueues['enqueue']>[2]) => queues.enqueue(name, data, options);
  const app = await createSlackApp({
    commands: commandRouter,
    config,
    botToken: emulator.botToken,
    signingSecret: emulator.signingSecret,
    mode: 'http',
    port: 0,
    host: '127.0.0.1',
    slackApiUrl: emulator.apiUrl,
    enqueue,
    log,
    redact,
    registerExtras: (app, slack) => {
      approvalHandlers({ config, plans, enqueue, log, now: () => Date.now() + clock.offsetMs, audit: auditLog })(app, slack);
      // "Plan the next batch" is the alerts' "Plan fix" button.
      alertActionHandlers({ config, commands: commandRouter, enqueue, log, audit: auditLog })(app, slack);
    },
  });
  await app.start();
  closers.push(() => app.stop());
  return { emulator, audit, appUrl: `http://127.0.0.1:${app.port}`, plans, clock };
}
