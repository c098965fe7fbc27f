import type { AuditLog } from '../../engine/audit/audit-log.ts';
import type { Redis } from 'ioredis';
import { createScanJob, SCAN_JOB } from './scan-job.ts';
import { ALERTMANAGER_JOB, createAlertmanagerJob } from './alertmanager-job.ts';
import type { JobDefinition } from '../../engine/job-types.ts';
import type { Adapters } from '../../adapters/adapters.ts';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { startJobWorkers, type RunningWorkers } from '../../engine/queue/job-workers.ts';
import { DEFAULT_PREFIX } from '../../engine/queue/queue-names.ts';
import { whenReady } from '../../engine/queue/connection-ready.ts';
import { describeError } from '../../core/errors.ts';
import { syncSchedulers, type SyncResult } from './schedulers.ts';
import type { Redactor } from '../../core/redact.ts';
import type { AlertSender } from './alert-sender.ts';
import { AlertStore } from './alert-store.ts';
import type { Metrics } from '../../engine/metrics.ts';
import { AlertReconciler } from './reconcile.ts';

export interface AlertingOptions {
  /** A worker-role connection (createRedis(url, 'worker'): maxRetriesPerRequest null). */
  connection: Redis;
  /** The BullMQ key prefix the queues use; default DEFAULT_PREFIX. */
  prefix?: string;
  config: Config;
  adapters: Adapters;
  /** The Slack gateway (src/edge/slack/gateway.ts) in production; without one (no bot token) alerts are tracked but not posted. */
  sender?: AlertSender;
  log: Logger;
  redact: Redactor;
  /** A resolved alert that comes back within this re-opens its message; default 10 minutes. */
  quietMs?: number;
  /** How stale an unchanged alert's "last checked" may get before a scheduled scan edits it (reconcile.ts DEFAULT_REFRESH_MS). */
  refreshMs?: number;
  /** Scans run at once by this process; default 4. */
  concurrency?: number;
  /** Upsert and prune the schedulers at start; default true. */
  schedule?: boolean;
  /** Tests inject their own check jobs; default the registered checks. */
  findJob?: (name: string) => JobDefinition | undefined;
  now?: () => number;
  /** The audit trail for alert transitions. */
  audit?: AuditLog;
  /** open_alerts, set after every reconcile. */
  metrics?: Pick<Metrics, 'setOpenAlerts'>;
  /** Aborted when the process stops: a start still waiting for Redis gives up and closes its worker. */
  signal?: AbortSignal;
}

/** Never called: without a channel the reconciler posts nothing. */
const NO_SENDER: AlertSender = {
  post: () => Promise.reject(new Error('no Slack sender')),
  update: () => Promise.reject(new Error('no Slack sender')),
};

export interface Alerting {
  store: AlertStore;
  reconciler: AlertReconciler;
  workers: RunningWorkers;
  schedulers: SyncResult | undefined;
  /** Stops taking scans and waits for the running ones. */
  close(): Promise<void>;
}

/**
 * The drift alerting of one process: the `scan` worker (queue `maas-scan`) and, unless told
 * otherwise, the schedulers that feed it. Call it in `serve` and `worker`; several processes
 * against one Redis share the schedulers and never double a scan or an alert.
 */
export async function startAlerting(options: AlertingOptions): Promise<Alerting> {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const log = options.log.child({ component: 'alerts' });
  const store = new AlertStore(options.connection, prefix);
  const channel = options.sender ? options.config.slack.alertChannel : undefined;
  const reconciler = new AlertReconciler({
    store,
    sender: options.sender ?? NO_SENDER,
    channel,
    log,
    ...(options.quietMs !== undefined ? { quietMs: options.quietMs } : {}),
    ...(options.refreshMs !== undefined ? { refreshMs: options.refreshMs } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  if (!channel) log.warn(options.sender ? 'slack.alertChannel is not set: drift is tracked (/maas alerts) but not posted' : 'no Slack sender: drift is tracked (/maas alerts) but not posted');
  const scanJob = createScanJob({ store, reconciler, redact: options.redact, ...(options.findJob ? { findJob: options.findJob } : {}) });
  const workers = startJobWorkers({
    connection: options.connection,
    jobs: new Map<string, JobDefinition>([
      [SCAN_JOB, scanJob],
      [ALERTMANAGER_JOB, createAlertmanagerJob({ store, sender: options.sender ?? NO_SENDER, channel, redact: options.redact, ...(options.findJob ? { findJob: options.findJob } : {}) }) as unknown as JobDefinition],
    ]),
    context: { config: options.config, adapters: options.adapters, log },
    redact: options.redact,
    prefix,
    concurrency: options.concurrency ?? 4,
  });
  let schedulers: SyncResult | undefined;
  try {
    if (options.schedule !== false) schedulers = await syncWhenReady(options, prefix, log);
  } catch (err) {
    await workers.close();
    throw err;
  }
  return { store, reconciler, workers, schedulers, close: () => workers.close() };
}

/** Tries at putting the schedulers in place, each after the connection is (back) up. */
const SYNC_ATTEMPTS = 5;

/**
 * A process started during a Sentinel failover can see its connection end before it is first
 * ready (reconnect-when-ended.ts brings it back): the first sync then fails with "Connection is
 * closed", and without another try the process would never scan. Each retry waits for the
 * connection's next 'ready'; any other failure, or the last try's, is thrown.
 */
async function syncWhenReady(options: AlertingOptions, prefix: string, log: Logger): Promise<SyncResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await untilAborted(syncSchedulers({ connection: options.connection, prefix, config: options.config, log }), options.signal);
    } catch (err) {
      if (options.signal?.aborted || attempt >= SYNC_ATTEMPTS || !isConnectionClosed(err)) throw err;
      log.warn({ err: describeError(err), attempt, of: SYNC_ATTEMPTS }, 'the scan schedulers could not be put in place: the Redis connection closed; trying again once it is back');
      await untilAborted(whenReady(options.connection), options.signal);
    }
  }
}

function isConnectionClosed(err: unknown): boolean {
  return /Connection is closed/.test(err instanceof Error ? err.message : String(err));
}

/** The promise, or a rejection as soon as `signal` aborts (the promise's own outcome is then dropped). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  promise.catch(() => undefined);
  if (signal.aborted) return Promise.reject(new Error('stopped before the scan schedulers were in place'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('stopped before the scan schedulers were in place'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
