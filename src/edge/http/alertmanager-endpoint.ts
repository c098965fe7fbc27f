import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Config } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { QueuedData } from '../../engine/job-types.ts';
import type { EnqueueOptions } from '../../engine/queue/job-queues.ts';
import { ALERTMANAGER_JOB, type AlertmanagerJobData } from '../alerts/alertmanager-job.ts';
import { parseWebhook, type WebhookGroup } from '../alerts/alertmanager-payload.ts';
import { routeGroup, type RoutedCheck } from '../alerts/alertmanager-routes.ts';
import { sendJson, type Route } from './health.ts';
import { sameSecret } from './same-secret.ts';

export type IntakeOutcome = 'accepted' | 'duplicate' | 'unmatched' | 'unknown_target' | 'unknown_check' | 'unauthorized' | 'invalid';

export interface AlertmanagerEndpointOptions {
  /** ALERTMANAGER_TOKEN. */
  token: string;
  config: Config;
  /** Answers the id of the job queued, or of the job an earlier identical request queued (`oncePer`). */
  enqueue: (name: string, data: QueuedData, options: EnqueueOptions) => Promise<string>;
  log: Logger;
  count?: (outcome: IntakeOutcome, n: number) => void;
}

/** Alertmanager's notifications are small; a body past this is not one. */
const MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_WINDOW_MS = 2 * 60_000;

/**
 * POST /alertmanager: Alertmanager's webhook (version 4) with `Authorization: Bearer
 * <ALERTMANAGER_TOKEN>` (http_config.authorization in its webhook_config). 401 and nothing runs on
 * a wrong token; 400 for a body that is not a webhook; 503 when the check cannot be queued (its
 * retrier resends on 5xx, never on 4xx: notify/webhook/webhook.go). Each routed check is queued
 * once per identical group within alertmanager.window.
 */
export function alertmanagerRoute(options: AlertmanagerEndpointOptions): Route {
  const log = options.log.child({ component: 'alertmanager' });
  const count = options.count ?? (() => undefined);
  return {
    path: '/alertmanager',
    method: ['POST'],
    handler: (req, res) => {
      if (!authorized(req.headers.authorization, options.token)) {
        count('unauthorized', 1);
        req.resume();
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="maas-chatops"', 'content-type': 'application/json; charset=utf-8' }).end('{"error":"a valid bearer token (ALERTMANAGER_TOKEN) is required"}\n');
        return;
      }
      void readJson(req).then(async (read) => {
        if ('status' in read) {
          count('invalid', 1);
          sendJson(res, read.status, { error: read.error });
          return;
        }
        const parsed = parseWebhook(read.body);
        if (!parsed.ok) {
          count('invalid', 1);
          sendJson(res, 400, { error: parsed.error });
          return;
        }
        try {
          sendJson(res, 200, await intake(options, parsed.group, log, count));
        } catch (err) {
          log.warn({ err: describeError(err) }, 'could not queue the checks of an Alertmanager notification; it will resend');
          sendJson(res, 503, { error: 'the checks could not be queued; try again' });
        }
      });
    },
  };
}

async function intake(options: AlertmanagerEndpointOptions, group: WebhookGroup, log: Logger, count: NonNullable<AlertmanagerEndpointOptions['count']>) {
  const { checks, unrouted } = routeGroup(options.config, group);
  for (const u of unrouted) {
    count(u.reason, 1);
    log.info({ groupKey: group.groupKey, alertname: u.alert.labels.alertname, reason: u.reason, detail: u.detail }, 'Alertmanager alert not answered');
  }
  const windowMs = options.config.alertmanager?.windowMs ?? DEFAULT_WINDOW_MS;
  let accepted = 0;
  let duplicates = 0;
  for (const routed of checks) {
    // The window is BullMQ's deduplication key, set by the same script that adds the job: an add
    // that fails leaves no key behind, so the retry Alertmanager sends after our 503 is queued.
    const jobId = randomUUID();
    const queued = await options.enqueue(ALERTMANAGER_JOB, jobData(group, routed), { jobId, attempts: 1, oncePer: { id: `alertmanager-${identity(group, routed)}`, ms: windowMs } });
    if (queued === jobId) accepted++;
    else duplicates++;
  }
  count('accepted', accepted);
  count('duplicate', duplicates);
  return { checks: accepted, duplicates, unrouted: unrouted.map((u) => ({ alertname: u.alert.labels.alertname ?? null, reason: u.reason, detail: u.detail })) };
}

function jobData(group: WebhookGroup, routed: RoutedCheck): AlertmanagerJobData {
  return {
    target: routed.target,
    requestedBy: 'alertmanager',
    groupKey: group.groupKey,
    status: group.status,
    check: routed.check,
    alerts: routed.alerts.map((a) => ({ alertname: a.labels.alertname ?? '', fingerprint: a.fingerprint, status: a.status })),
  };
}

/** The same group in the same state, routed to the same check: what a resend or an HA twin sends. */
function identity(group: WebhookGroup, routed: RoutedCheck): string {
  const alerts = routed.alerts.map((a) => `${a.fingerprint || JSON.stringify(a.labels)}=${a.status}`).sort();
  return createHash('sha256').update([group.groupKey, group.status, routed.check, routed.target, ...alerts].join('\0')).digest('hex').slice(0, 32);
}

function authorized(header: string | undefined, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  return m?.[1] ? sameSecret(m[1], token) : false;
}

function readJson(req: IncomingMessage): Promise<{ body: unknown } | { status: number; error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Past the cap the rest is read and dropped, so the answer still reaches the sender.
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        resolve({ status: 413, error: `the body is larger than ${MAX_BODY_BYTES} bytes` });
        return;
      }
      try {
        resolve({ body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        resolve({ status: 400, error: 'the body is not JSON' });
      }
    });
    req.on('error', () => resolve({ status: 400, error: 'the body could not be read' }));
  });
}
