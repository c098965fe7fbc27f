import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, SocketModeReceiver, type Context, type CustomRoute, type Middleware, type Receiver, type SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { AuditLog } from '../../engine/audit/audit-log.ts';
import type { AlertStore } from '../alerts/alert-store.ts';
import { auditCommand } from '../command-audit.ts';
import type { CommandRouter } from './command-contract.ts';
import { runInvocation, type CommandEdge } from './command-edge.ts';
import type { CommandResult } from './command-result.ts';
import { commandName, parseInvocation, type Invocation } from './invocation.ts';
import type { Config } from '../../core/config.ts';
import { ChatopsError, describeError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { Redactor } from '../../core/redact.ts';
import { boltLogger } from './bolt-logger.ts';
import { checkChannelAccess, configuredChannels, logChannelAccess, type ChannelAccess } from './channel-access.ts';
import { deliverReply } from './deliver-reply.ts';
import { slackUserGroups } from './user-groups.ts';
import { createSlackGateway, type SlackGateway, type SlackMetrics } from './gateway.ts';
import { afterAckQueue } from './after-ack.ts';
import type { Submitted } from '../../engine/queue/dedup.ts';
import type { JobData } from '../../engine/job-types.ts';
import { guardedEnqueue, type Enqueue } from './guarded-enqueue.ts';
import { guardPayloads } from './payload-guard.ts';
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
  /** The subcommands (commands/dispatch.ts commandRouter), handed in by the composition root. */
  commands: CommandRouter;
  enqueue: Enqueue;
  /** Queues a check and says whether it joined an identical one already queued or running. */
  submit?: (jobName: string, data: JobData) => Promise<Submitted>;
  log: Logger;
  /** The process's Slack gateway; without one the app makes its own from the token, the redactor and the metrics. */
  gateway?: SlackGateway;
  /** The one redaction pass of a gateway made here. */
  redact?: Redactor;
  /** Extra HTTP routes (/healthz, /readyz, /metrics), served in both modes. */
  customRoutes?: CustomRoute[];
  /** Registers more listeners (app.action(...) for approvals) before the app starts; they speak through the gateway. */
  registerExtras?: (app: App, slack: SlackGateway) => void;
  /** The slash command; default `/maas`. */
  command?: string;
  /** How long a command waits for the queue before telling the user; default 10 s. */
  enqueueTimeoutMs?: number;
  /** Commands answered at once after their ack (see after-ack.ts); default 8. */
  afterAckConcurrency?: number;
  /** Called once per /maas with what became of it (the metrics). */
  onCommand?: (invocation: Invocation, result: CommandResult) => void;
  /** Every command and refusal is recorded here; /maas audit reads it. */
  audit?: AuditLog;
  /** Alert state for /maas alerts and /maas silence. */
  alerts?: AlertStore;
  /** Counts a message Slack refused for its content, replaced by a plain fallback (the metrics). */
  onSlackFallback?: (slackError: string) => void;
  /** Failed Web API calls and 429s of the app's own client. */
  metrics?: SlackMetrics;
  /** Counts a request refused, or a payload dropped, before any listener ran (request-guard.ts, payload-guard.ts). */
  onRequestRefused?: (reason: string) => void;
  /** HTTP mode: remembers a request signature for a while, false if already seen (replay refusal; see request-guard.ts). */
  rememberSignature?: (signature: string, ttlSec: number) => Promise<boolean>;
  /**
   * auth.test at start when Slack cannot be reached: tries, and the first wait (doubled each time);
   * default 4 tries from 2 s. Each try has the gateway's own backoff inside (a refused connection is
   * retried for about 15 s), so a bot gives up after about a minute.
   */
  startRetry?: { attempts: number; firstDelayMs: number };
}

export interface SlackApp {
  app: App;
  /** Every message the app sends goes through it. */
  gateway: SlackGateway;
  /** The HTTP port actually listened on, once started (undefined in Socket Mode without custom routes). */
  readonly port: number | undefined;
  /** What the start-up check found for the alert channel and each command channel (channel-access.ts). */
  readonly channelAccess: readonly ChannelAccess[];
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
  const slack =
    options.gateway ??
    createSlackGateway({
      token: options.botToken,
      ...(options.slackApiUrl ? { slackApiUrl: options.slackApiUrl } : {}),
      redact: options.redact ?? ((text) => text),
      log: options.log,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.onSlackFallback ? { onFallback: options.onSlackFallback } : {}),
    });
  const clientOptions = { ...slack.clientOptions, slackApiUrl: options.slackApiUrl ?? SLACK_API_URL };
  const receiver = buildReceiver(options, logger, clientOptions);
  const bot: { botId?: string; botUserId?: string } = {};
  // Bolt is given the token through `authorize`, not `token`: it then makes no Web API call of its own (auth.test goes through the gateway at start).
  const app = new App({ receiver, logger, clientOptions, authorize: async () => ({ botToken: options.botToken, ...bot }), deferInitialization: true });

  guardPayloads(app, { log: options.log, ...(options.onRequestRefused ? { onRefused: options.onRequestRefused } : {}) });
  registerCommand(app, options, slack, log);
  app.error(async (error) => {
    log.error({ err: describeError(error), code: (error as { code?: string }).code }, 'Slack listener failed');
  });
  options.registerExtras?.(app, slack);

  let port: number | undefined;
  let routesServer: Server | undefined;
  let channelAccess: ChannelAccess[] = [];
  return {
    app,
    gateway: slack,
    get port() {
      return port;
    },
    get channelAccess() {
      return channelAccess;
    },
    async start() {
      Object.assign(bot, await initialize(app, slack, { apiUrl: clientOptions.slackApiUrl, log, retry: options.startRetry ?? DEFAULT_START_RETRY }));
      channelAccess = await checkChannelAccess(slack.reader, configuredChannels(options.config));
      logChannelAccess(log, channelAccess);
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
      receiver.requestListener = guardSlackRequests(receiver.requestListener, { signingSecret: options.signingSecret, remember: options.rememberSignature, log: options.log, ...(options.onRequestRefused ? { onRefused: options.onRequestRefused } : {}) });
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

const DEFAULT_START_RETRY = { attempts: 4, firstDelayMs: 2_000 };

/**
 * auth.test at start. Slack's answer settles it: an error code (invalid_auth, token_revoked…) is a
 * wrong token, a config error. No answer (refused, DNS, TLS, a timeout, a 5xx) is the network's
 * doing: it is tried again with a doubling wait, then reported naming the host that was not reached.
 */
async function initialize(app: App, slack: SlackGateway, how: { apiUrl: string; log: Logger; retry: { attempts: number; firstDelayMs: number } }): Promise<{ botId?: string; botUserId?: string }> {
  const host = new URL(how.apiUrl).host;
  for (let attempt = 1; ; attempt++) {
    try {
      const who = await slack.client.auth.test();
      await app.init();
      return { ...(who.bot_id ? { botId: who.bot_id } : {}), ...(who.user_id ? { botUserId: who.user_id } : {}) };
    } catch (err) {
      const code = slackCode(err);
      if (code) {
        throw new ChatopsError('CONFIG_INVALID', `Slack refused the bot token (${code})`, { hint: 'Check SLACK_BOT_TOKEN (xoxb-…) and SLACK_API_URL', cause: err });
      }
      const why = networkCause(err);
      if (attempt >= how.retry.attempts) {
        throw new ChatopsError('SLACK_UNREACHABLE', `Slack could not be reached at ${host} (${why}; ${attempt} tries)`, {
          hint: 'Check the network path to it (DNS, proxy, firewall: the bot needs outbound HTTPS) or SLACK_API_URL; the token was not checked',
          cause: err,
        });
      }
      const waitMs = how.retry.firstDelayMs * 2 ** (attempt - 1);
      how.log.warn({ host, attempt, of: how.retry.attempts, retryInMs: waitMs, err: why }, 'Slack could not be reached to check the bot token; trying again');
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

/** What kept a Web API call from an answer: the socket error's code (ECONNREFUSED, ENOTFOUND…), an HTTP status, or the message. */
function networkCause(err: unknown): string {
  const e = err as { original?: { cause?: { code?: unknown; message?: unknown }; message?: unknown }; statusCode?: unknown } | undefined;
  if (typeof e?.statusCode === 'number') return `HTTP ${e.statusCode}`;
  const cause = e?.original?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return typeof e?.original?.message === 'string' ? e.original.message : describeError(err);
}

function registerCommand(app: App, options: SlackAppOptions, slack: SlackGateway, log: Logger): void {
  const edge: CommandEdge = {
    config: options.config,
    router: options.commands,
    enqueue: guardedEnqueue(options.enqueue, { timeoutMs: options.enqueueTimeoutMs ?? 10_000, log }),
    submit: options.submit ? guardedEnqueue(options.submit, { timeoutMs: options.enqueueTimeoutMs ?? 10_000, log }) : undefined,
    audit: options.audit,
    alerts: options.alerts,
    groups: slackUserGroups(slack.reader, options.config.slack.userGroupCacheMs),
    log,
  };
  const afterAck = afterAckQueue(options.afterAckConcurrency ?? DEFAULT_AFTER_ACK_CONCURRENCY);
  app.command(options.command ?? '/maas', parseSlashCommand, async ({ context }) => {
    const release = await afterAck.turn();
    try {
      await answerCommand(invocationOf(context));
    } finally {
      release();
    }
  });

  async function answerCommand(invocation: Invocation): Promise<void> {
    const where = { user: invocation.user, channel: invocation.channel };
    const result = await runInvocation(edge, invocation);
    const { reply } = result;
    log.info({ ...where, command: commandName(invocation), outcome: result.outcome, visibility: reply.visibility }, '/maas answered');
    options.onCommand?.(invocation, result);
    try {
      await deliverReply(reply, { ...where, responseUrl: invocation.responseUrl }, slack, log);
    } catch (err) {
      log.error({ ...where, err: describeError(err), slackError: slackCode(err) }, 'could not post the /maas answer');
    }
    await auditCommand(options.audit, invocation, result);
  }
}

/**
 * Bolt middleware: acks at once (Slack gives 3 seconds; nothing the queue does may delay it),
 * then parses the command once into the invocation every later step reads.
 */
const parseSlashCommand: Middleware<SlackCommandMiddlewareArgs> = async ({ command, ack, context, next }) => {
  await ack();
  context.invocation = parseInvocation({
    text: command.text,
    user: command.user_id,
    channel: command.channel_id,
    team: command.team_id,
    responseUrl: command.response_url,
    source: 'slash_command',
  });
  await next();
};

function invocationOf(context: Context): Invocation {
  return context.invocation as Invocation;
}

/** Slack's error code (invalid_auth, channel_not_found…) when Slack answered. */
function slackCode(err: unknown): string | undefined {
  const code = (err as { data?: { error?: unknown } } | undefined)?.data?.error;
  return typeof code === 'string' ? code : undefined;
}
