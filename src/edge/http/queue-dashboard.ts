import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Job, JobState, Queue } from 'bullmq';
import type { AuditRecorder } from '../../engine/audit/audit-log.ts';
import { ChatopsError } from '../../core/errors.ts';
import { sendJson, type Route } from './health.ts';
import { createLoginThrottle, type LoginThrottleOptions } from '../../core/login-throttle.ts';
import { queueBoardHandler } from './queue-board.ts';
import { redactDeep, type Redactor } from '../../core/redact.ts';
import { Secret } from '../../core/secret.ts';
import { sameSecret } from './same-secret.ts';

/*
 * A read-only view of the BullMQ queues: Bull Board (in readOnlyMode) at /admin/queues, and our
 * own JSON of counts and latest jobs at /admin/queues.json. Off unless DASHBOARD_USER and
 * DASHBOARD_PASSWORD are set; every request needs them (HTTP basic auth). Job data is stored in
 * clear text in Redis, so everything shown passes the redactor. There is no action (retry,
 * remove, pause): only GET reaches the board, and its queues are read-only besides.
 */

export const DASHBOARD_PATH = '/admin/queues';
/** The board's page, its API and its static files: the path and everything below it. */
export const DASHBOARD_ROUTE = `${DASHBOARD_PATH}{/*rest}`;
export const DASHBOARD_JSON_PATH = '/admin/queues.json';
const MIN_PASSWORD_LENGTH = 12;
const DEFAULT_JOBS_PER_QUEUE = 20;
const MAX_JOBS_PER_QUEUE = 100;

/** The states a job can be in (BullMQ 6), in the order the page lists them. */
const STATES: readonly JobState[] = ['active', 'waiting', 'prioritized', 'delayed', 'waiting-children', 'failed', 'completed'];

export interface DashboardAuth {
  user: Secret;
  password: Secret;
}

/** The methods the JSON view reads; a bullmq Queue has them. */
export type DashboardQueue = Pick<Queue, 'name' | 'getJobCounts' | 'getJobs' | 'isPaused'>;

export interface QueueDashboardOptions {
  /** The queues, or a function that lists them at request time (queues made lazily). */
  queues: readonly Queue[] | (() => readonly Queue[]);
  redact: Redactor;
  auth: DashboardAuth;
  /** Latest jobs shown per queue (a `?limit=` up to 100 overrides it). Default 20. */
  jobsPerQueue?: number;
  /** Wrong credentials are recorded here (kind refusal, action queue-dashboard). */
  audit?: AuditRecorder;
  /** Wrong credentials per client address: default 5 in 15 minutes, then 429 until the window passes. */
  throttle?: LoginThrottleOptions;
}

export interface JobView {
  id: string;
  name: string;
  state: JobState;
  target: string | null;
  attempts: number;
  failedReason: string | null;
  createdAt: string | null;
  finishedAt: string | null;
  data: unknown;
}

export interface QueueView {
  name: string;
  paused: boolean;
  counts: Record<string, number>;
  jobs: JobView[];
}

/**
 * Credentials from DASHBOARD_USER and DASHBOARD_PASSWORD; null (dashboard off) when neither is set.
 * One without the other, or a short password, is a config error rather than a silently open door.
 */
export function dashboardAuthFromEnv(env: NodeJS.ProcessEnv): DashboardAuth | null {
  const user = env.DASHBOARD_USER ?? '';
  const password = env.DASHBOARD_PASSWORD ?? '';
  if (!user && !password) return null;
  if (!user || !password) {
    throw new ChatopsError('CONFIG_INVALID', `${user ? 'DASHBOARD_PASSWORD' : 'DASHBOARD_USER'} is not set`, {
      hint: 'Set both DASHBOARD_USER and DASHBOARD_PASSWORD to turn the queue dashboard on, or neither to keep it off',
    });
  }
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ChatopsError('CONFIG_INVALID', `DASHBOARD_PASSWORD is shorter than ${MIN_PASSWORD_LENGTH} characters`, {
      hint: 'Use a long random password, e.g. `openssl rand -base64 24`',
    });
  }
  return { user: new Secret(user, 'env:DASHBOARD_USER'), password: new Secret(password, 'env:DASHBOARD_PASSWORD') };
}

/** GET /admin/queues (Bull Board) and /admin/queues.json, both behind basic auth. */
export function queueDashboardRoutes(options: QueueDashboardOptions): Route[] {
  const throttle = createLoginThrottle(options.throttle);
  const listQueues = () => (typeof options.queues === 'function' ? options.queues() : options.queues);
  const board = queueBoardHandler({ basePath: DASHBOARD_PATH, queues: listQueues, redact: options.redact });
  const wrongCredentials = (client: string): void => {
    const failures = throttle.fail(client);
    const detail = `wrong queue dashboard credentials from ${client} (${failures} in the throttle window)`;
    void options.audit?.record({ kind: 'refusal', actor: `http:${client}`, action: 'queue-dashboard', outcome: 'refused', detail }).catch(() => undefined);
  };
  const guarded = (serve: (req: IncomingMessage, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => {
    const client = req.socket.remoteAddress ?? 'unknown';
    const lockedMs = throttle.lockedFor(client);
    if (lockedMs > 0) {
      res
        .writeHead(429, { 'retry-after': String(Math.ceil(lockedMs / 1000)), 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .end('too many wrong passwords (from this address, or from everywhere at once); try again later\n');
      return;
    }
    if (!isAuthorized(req.headers.authorization, options.auth)) {
      // A browser's first request carries no credentials: only a wrong attempt counts.
      if (req.headers.authorization !== undefined) wrongCredentials(client);
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="maas-chatops queues", charset="UTF-8"', 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .end('authentication required\n');
      return;
    }
    serve(req, res);
  };
  const json = (req: IncomingMessage, res: ServerResponse) => {
    const limit = limitOf(req.url, options.jobsPerQueue ?? DEFAULT_JOBS_PER_QUEUE);
    queueViews(listQueues(), options.redact, limit).then(
      (views) => sendJson(res, 200, { queues: views }),
      () => sendJson(res, 503, { error: 'the queues could not be read (is Redis reachable? check REDIS_URL)' }),
    );
  };
  return [
    { path: DASHBOARD_ROUTE, method: ['GET', 'HEAD'], handler: guarded(board) },
    { path: DASHBOARD_JSON_PATH, method: ['GET'], handler: guarded(json) },
  ];
}

/** The dashboard's routes when the env turns it on, else none. */
export function dashboardRoutesFromEnv(env: NodeJS.ProcessEnv, options: Omit<QueueDashboardOptions, 'auth'>): Route[] {
  const auth = dashboardAuthFromEnv(env);
  return auth ? queueDashboardRoutes({ ...options, auth }) : [];
}

/** Basic auth, both fields compared in constant time (digests of equal length, no early exit). */
export function isAuthorized(header: string | undefined, auth: DashboardAuth): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const userOk = sameSecret(decoded.slice(0, colon), auth.user.reveal());
  const passwordOk = sameSecret(decoded.slice(colon + 1), auth.password.reveal());
  return userOk && passwordOk;
}

/** Counts and the latest jobs of each queue; every string in the result has passed the redactor. */
export async function queueViews(queues: readonly DashboardQueue[], redact: Redactor, limit: number): Promise<QueueView[]> {
  const views = await Promise.all(queues.map((q) => queueView(q, limit)));
  return redactDeep(views, redact);
}

async function queueView(queue: DashboardQueue, limit: number): Promise<QueueView> {
  const [counts, paused, perState] = await Promise.all([
    queue.getJobCounts(...STATES),
    queue.isPaused(),
    Promise.all(STATES.map(async (state) => ({ state, jobs: (await queue.getJobs(state, 0, limit - 1, false)) as (Job | undefined)[] }))),
  ]);
  const jobs = perState
    .flatMap(({ state, jobs: list }) => list.filter((j): j is Job => Boolean(j)).map((job) => jobView(job, state)))
    .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''))
    .slice(0, limit);
  return { name: queue.name, paused, counts, jobs };
}

function jobView(job: Job, state: JobState): JobView {
  const data: unknown = job.data;
  const target = data && typeof data === 'object' && typeof (data as { target?: unknown }).target === 'string' ? (data as { target: string }).target : null;
  return {
    id: String(job.id ?? ''),
    name: job.name,
    state,
    target,
    attempts: job.attemptsMade,
    failedReason: job.failedReason || null,
    createdAt: isoOrNull(job.timestamp),
    finishedAt: isoOrNull(job.finishedOn),
    data: plain(data),
  };
}

/** Job data round-tripped through JSON, so redactDeep sees only plain objects. */
function plain(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as unknown;
  } catch {
    return null;
  }
}

function isoOrNull(ms: number | undefined): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}

function limitOf(url: string | undefined, fallback: number): number {
  const asked = Number(new URL(url ?? '/', 'http://localhost').searchParams.get('limit') ?? fallback);
  return Number.isInteger(asked) ? Math.min(Math.max(asked, 1), MAX_JOBS_PER_QUEUE) : fallback;
}
