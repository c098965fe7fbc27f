import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, SocketModeReceiver, type CustomRoute, type Receiver, type RespondFn, type SlashCommand } from '@slack/bolt';
import { WebClientEvent, type WebClient } from '@slack/web-api';
import { dispatchCommand } from '../../commands/dispatch.ts';
import { findCommand } from '../../commands/index.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { CommandOutcome } from '../metrics.ts';
import type { AlertStore } from '../alerts/alert-store.ts';
import { auditCommand, recordingEnqueue } from '../audit/command-audit.ts';
import type { CommandContext, CommandReply } from '../command-types.ts';
import type { Config } from '../config.ts';
import { ChatopsError, describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Redactor } from '../redact.ts';
import { boltLogger } from './bolt-logger.ts';
import { commandRefusal, subcommandFor } from './command-policy.ts';
import { deliverReply } from './deliver-reply.ts';
import type { SlackMetrics } from './notifier.ts';
import { noBlindRetries } from './post-once.ts';
import { afterAckQueue } from './after-ack.ts';
import type { Submitted } from '../queue/dedup.ts';
import type { JobData } from '../job-types.ts';
import { guardedEnqueue, type Enqueue } from './guarded-enqueue.ts';
import { guardSlackRequests } from './request-guard.ts';
import { closeServer, startRoutesServer } from './routes-server.ts';

export type { CustomRoute } from '@slack/bolt';

export interface SlackAppOptions {
  config: Config;
  botToken: string;
  /** Required in HTTP mode. */
  signingSecret?: string;
  /** Required in Socket Mode (`xapp-…`). */
  appToken?: string;
  mode: 'http' | 'socket';
  /** HTTP port for /slack/events (HTTP mode) and the custom routes; 0 picks a free one. Default 3000. */
  port?: number;
  /** Address to listen on; default every interface. Tests pass 127.0.0.1. */
  host?: string;
  /** Web API base URL ending in `/` (SLACK_API_URL); default Slack's. */
  slackApiUrl?: string;
  enqueue: Enqueue;
  /** Queues a check and says whether it joined an identical one already queued or running. */
  submit?: (jobName: string, data: JobData) => Promise<Submitted>;
  log: Logger;
  redact: Redactor;
  /** Extra HTTP routes (/healthz, /readyz, /metrics), served in both modes. */
  customRoutes?: CustomRoute[];
  /** Registers more listeners (app.action(...) for approvals) before the app starts. */
  registerExtras?: (app: App) => void;
  /** The slash command; default `/maas`. */
  command?: string;
  /** How long a command waits for the queue before telling the user; default 10 s. */
  enqueueTimeoutMs?: number;
  /** Commands answered at once after their ack (see after-ack.ts); default 8. */
  afterAckConcurrency?: number;
  /** Called once per /maas with its subcommand and outcome (the metrics). */
  onCommand?: (subcommand: string, outcome: CommandOutcome) => void;
  /** Every command and refusal is recorded here; /maas audit reads it. */
  audit?: AuditLog;
  /** Alert state for /maas alerts and /maas silence. */
  alerts?: AlertStore;
  /** Counts a message Slack refused for its content, replaced by a plain fallback (the metrics). */
  onSlackFallback?: (slackError: string) => void;
  /** Failed Web API calls and 429s of the app's own client. */
  metrics?: SlackMetrics;
  /** HTTP mode: remembers a request signature for a while, false if already seen (replay refusal; see request-guard.ts). */
  rememberSignature?: (signature: string, ttlSec: number) => Promise<boolean>;
}

export interface SlackApp {
  app: App;
  /** The HTTP port actually listened on, once started (undefined in Socket Mode without custom routes). */
  readonly port: number | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_PORT = 3000;
/** Measured in bench/ack-latency.ts: acks stay within the bare Bolt app's latency at 200 concurrent commands. */
const DEFAULT_AFTER_ACK_CONCURRENCY = 8;
const SLACK_API_URL = 'https://slack.com/api/';

export async function createSlackApp(options: SlackAppOptions): Promise<SlackApp> {
  const log = options.log.child({ component: 'slack' });
  const logger = boltLogger(options.log);
  const clientOptions = {
    slackApiUrl: options.slackApiUrl ?? SLACK_API_URL,
    // A listener must not hang for half an hour on Slack's default retry policy; a post is never repeated blindly (post-once.ts).
    retryConfig: noBlindRetries({ retries: 3, factor: 2, minTimeout: 500, maxTimeout: 5000 }),
    timeout: 15_000,
  };
  const receiver = buildReceiver(options, logger, clientOptions);
  const app = new App({ token: options.botToken, receiver, logger, clientOptions, deferInitialization: true });
  app.client.on(WebClientEvent.RATE_LIMITED, (_retryAfterSec: number, request?: { url?: string }) => options.metrics?.recordSlackRateLimited(request?.url ?? 'other'));

  registerCommand(app, options, log);
  app.error(async (error) => {
    log.error({ err: describeError(error), code: (error as { code?: string }).code }, 'Slack listener failed');
  });
  options.registerExtras?.(app);

  let port: number | undefined;
  let routesServer: Server | undefined;
  return {
    app,
    get port() {
      return port;
    },
    async start() {
      await initialize(app);
      const listenPort = options.port ?? DEFAULT_PORT;
      if (options.mode === 'http') {
        const server = (await app.start({ port: listenPort, ...(options.host ? { host: options.host } : {}) })) as Server;
        port = (server.address() as AddressInfo).port;
        log.info({ port }, 'Slack app listening for HTTP requests at /slack/events');
        return;
      }
      if (options.customRoutes?.length) {
        const started = await startRoutesServer(options.customRoutes, { port: listenPort, ...(options.host ? { host: options.host } : {}) });
        routesServer = started.server;
        port = started.port;
      }
      try {
        await app.start();
      } catch (err) {
        if (routesServer) await closeServer(routesServer);
        routesServer = undefined;
        throw new ChatopsError('CONFIG_INVALID', `Socket Mode could not connect${slackCode(err) ? ` (${slackCode(err)})` : `: ${describeError(err)}`}`, {
          hint: 'Check SLACK_APP_TOKEN (xapp-…, with the connections:write scope) and SLACK_API_URL',
          cause: err,
        });
      }
      log.info({ port }, 'Slack app connected in Socket Mode');
    },
    async stop() {
      await app.stop();
      if (routesServer) await closeServer(routesServer);
      routesServer = undefined;
    },
  };
}

function buildReceiver(options: SlackAppOptions, logger: ReturnType<typeof boltLogger>, clientOptions: { slackApiUrl: string }): Receiver {
  if (options.mode === 'http') {
    if (!options.signingSecret) {
      throw new ChatopsError('CONFIG_MISSING', 'HTTP mode needs the Slack signing secret', {
        hint: 'Set SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN for Socket Mode',
      });
    }
    const receiver = new HTTPReceiver({
      signingSecret: options.signingSecret,
      endpoints: '/slack/events',
      port: options.port ?? DEFAULT_PORT,
      customRoutes: options.customRoutes ?? [],
      logger,
    });
    if (options.rememberSignature) {
      receiver.requestListener = guardSlackRequests(receiver.requestListener, { signingSecret: options.signingSecret, remember: options.rememberSignature, log: options.log });
    }
    return receiver;
  }
  if (!options.appToken) {
    throw new ChatopsError('CONFIG_MISSING', 'Socket Mode needs an app-level token', {
      hint: 'Set SLACK_APP_TOKEN (xapp-…, with the connections:write scope), or SLACK_MODE=http with SLACK_SIGNING_SECRET',
    });
  }
  // Only the URL: the Socket Mode client keeps its own patient retries for apps.connections.open when reconnecting.
  return new SocketModeReceiver({ appToken: options.appToken, logger, installerOptions: { clientOptions: { slackApiUrl: clientOptions.slackApiUrl } } });
}

/** auth.test at start: a wrong token or an unreachable Slack stops the bot with a clear message. */
async function initialize(app: App): Promise<void> {
  try {
    await app.init();
  } catch (err) {
    const code = slackCode(err);
    throw new ChatopsError('CONFIG_INVALID', `Slack refused the bot token${code ? ` (${code})` : `: ${describeError(err)}`}`, {
      hint: 'Check SLACK_BOT_TOKEN (xoxb-…) and SLACK_API_URL',
      cause: err,
    });
  }
}

function registerCommand(app: App, options: SlackAppOptions, log: Logger): void {
  const enqueue = guardedEnqueue(options.enqueue, { timeoutMs: options.enqueueTimeoutMs ?? 10_000, log });
  const submit = options.submit ? guardedEnqueue(options.submit, { timeoutMs: options.enqueueTimeoutMs ?? 10_000, log }) : undefined;
  const afterAck = afterAckQueue(options.afterAckConcurrency ?? DEFAULT_AFTER_ACK_CONCURRENCY);
  app.command(options.command ?? '/maas', async ({ command, ack, respond, client }) => {
    // Slack gives 3 seconds; nothing the queue does may delay this.
    await ack();
    const release = await afterAck.turn();
    try {
      await answerCommand(command, respond, client);
    } finally {
      release();
    }
  });

  async function answerCommand(command: SlashCommand, respond: RespondFn, client: WebClient): Promise<void> {
    const where = { user: command.user_id, channel: command.channel_id };
    const text = command.text ?? '';
    const queued = recordingEnqueue(enqueue);
    let reply: CommandReply;
    let refusal: string | undefined;
    let failure: unknown;
    try {
      refusal = commandRefusal(options.config.slack, where.user, where.channel, subcommandFor(text, findCommand));
      if (refusal) {
        reply = { text: refusal, visibility: 'ephemeral' };
      } else {
        const ctx: CommandContext = {
          config: options.config,
          ...where,
          ...(command.response_url ? { responseUrl: command.response_url } : {}),
          enqueue: queued.enqueue,
          ...(submit ? { submit: recordingSubmit(submit, queued.jobIds) } : {}),
          ...(options.audit ? { audit: options.audit } : {}),
          ...(options.alerts ? { alerts: options.alerts } : {}),
        };
        reply = await dispatchCommand(ctx, text);
      }
    } catch (err) {
      failure = err;
      log.error({ ...where, err: describeError(err) }, '/maas failed');
      reply = { text: `/maas failed: ${describeError(err)}`, visibility: 'ephemeral' };
    }
    log.info({ ...where, command: firstWord(command.text), visibility: reply.visibility }, '/maas answered');
    options.onCommand?.(firstWord(command.text) || 'help', commandOutcome({ refusal, failure, queued: queued.jobIds.length > 0, known: Boolean(findCommand(firstWord(command.text))) }));
    try {
      await deliverReply(reply, { respond, client, ...where }, options.redact, log, options.onSlackFallback);
    } catch (err) {
      options.metrics?.recordSlackError(reply.visibility === 'in_channel' ? 'chat.postMessage' : 'chat.postEphemeral', err);
      log.error({ ...where, err: describeError(err), slackError: slackCode(err) }, 'could not post the /maas answer');
    }
    await auditCommand(options.audit, { ...where, text, reply, jobIds: queued.jobIds, ...(refusal ? { refusal } : {}), ...(failure !== undefined ? { error: failure } : {}) });
  }
}

/** A shared check still names its job in the audit trail. */
function recordingSubmit(submit: (jobName: string, data: JobData) => Promise<Submitted>, jobIds: string[]) {
  return async (jobName: string, data: JobData): Promise<Submitted> => {
    const submitted = await submit(jobName, data);
    jobIds.push(submitted.id);
    return submitted;
  };
}

/** Slack's error code (invalid_auth, channel_not_found…) when Slack answered. */
function slackCode(err: unknown): string | undefined {
  const code = (err as { data?: { error?: unknown } } | undefined)?.data?.error;
  return typeof code === 'string' ? code : undefined;
}

/** What became of a command, for the metrics: refused, failed, queued work, answered at once, or not understood. */
function commandOutcome(c: { refusal: string | undefined; failure: unknown; queued: boolean; known: boolean }): CommandOutcome {
  if (c.refusal) return 'denied';
  if (c.failure !== undefined) return 'error';
  if (c.queued) return 'accepted';
  return c.known ? 'answered' : 'usage';
}

function firstWord(text: string | undefined): string {
  return (text ?? '').trim().split(/\s+/)[0]?.slice(0, 40) ?? '';
}
