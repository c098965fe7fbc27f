import { isIP } from 'node:net';
import { ChatopsError } from './errors.ts';

export interface RuntimeEnv {
  botToken?: string;
  signingSecret?: string;
  appToken?: string;
  /** ALERTMANAGER_TOKEN: the bearer token POST /alertmanager requires; unset = the route is off. */
  alertmanagerToken?: string;
  mode: 'socket' | 'http';
  slackApiUrl?: string;
  port: number;
  /** HOST: the address every listener binds; default 0.0.0.0 (every IPv4 interface, as a container needs). */
  host: string;
  /** METRICS_PORT: when set, /metrics is served on its own listener there instead of on PORT. */
  metricsPort?: number;
  redisUrl: string;
  logLevel: string;
  /** MAAS_MAX_BODY_MIB in bytes: the largest MAAS response body read. */
  maasMaxBodyBytes: number;
  /** MAAS_CHATOPS_QUEUE_PREFIX: the Redis key prefix of the queues; processes that work together share it. */
  queuePrefix?: string;
}

/** The environment (docs/configuration.md), as a pure function of an env. */
export function readRuntimeEnv(env: NodeJS.ProcessEnv): RuntimeEnv {
  const mode = env.SLACK_MODE ?? (env.SLACK_APP_TOKEN ? 'socket' : 'http');
  if (mode !== 'socket' && mode !== 'http') {
    throw new ChatopsError('CONFIG_INVALID', `SLACK_MODE is "${mode}"`, { hint: 'Set SLACK_MODE to socket or http' });
  }
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ChatopsError('CONFIG_INVALID', `PORT is "${env.PORT}"`, { hint: 'Set PORT to a TCP port number' });
  }
  const out: RuntimeEnv = {
    mode,
    port,
    host: readHost(env),
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    logLevel: env.LOG_LEVEL ?? 'info',
    maasMaxBodyBytes: readMaasMaxBodyBytes(env),
  };
  const metricsPort = readMetricsPort(env, port);
  if (metricsPort !== undefined) out.metricsPort = metricsPort;
  if (env.SLACK_BOT_TOKEN) out.botToken = env.SLACK_BOT_TOKEN;
  if (env.SLACK_SIGNING_SECRET) out.signingSecret = env.SLACK_SIGNING_SECRET;
  if (env.SLACK_APP_TOKEN) out.appToken = env.SLACK_APP_TOKEN;
  if (env.ALERTMANAGER_TOKEN) out.alertmanagerToken = env.ALERTMANAGER_TOKEN;
  if (env.SLACK_API_URL) out.slackApiUrl = env.SLACK_API_URL;
  if (env.MAAS_CHATOPS_QUEUE_PREFIX !== undefined) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(env.MAAS_CHATOPS_QUEUE_PREFIX)) {
      throw new ChatopsError('CONFIG_INVALID', `MAAS_CHATOPS_QUEUE_PREFIX is "${env.MAAS_CHATOPS_QUEUE_PREFIX.slice(0, 80)}"`, {
        hint: 'Use 1 to 64 letters, digits, dots, dashes or underscores (no colon), the same for the bot and every worker',
      });
    }
    out.queuePrefix = env.MAAS_CHATOPS_QUEUE_PREFIX;
  }
  return out;
}

const HOST_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]+)$/;

function readHost(env: NodeJS.ProcessEnv): string {
  const host = env.HOST === undefined || env.HOST === '' ? '0.0.0.0' : env.HOST;
  if (!HOST_VALUE.test(host) || (host.includes(':') && isIP(host) !== 6)) {
    throw new ChatopsError('CONFIG_INVALID', `HOST is "${host.slice(0, 80)}"`, {
      hint: 'Set HOST to the address to listen on: 0.0.0.0 (every IPv4 interface, the default), :: (IPv6 too), 127.0.0.1, or a local address',
    });
  }
  return host;
}

function readMetricsPort(env: NodeJS.ProcessEnv, port: number): number | undefined {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return undefined;
  const metricsPort = Number(env.METRICS_PORT);
  if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) {
    throw new ChatopsError('CONFIG_INVALID', `METRICS_PORT is "${env.METRICS_PORT.slice(0, 40)}"`, { hint: 'Set METRICS_PORT to a TCP port number, or unset it to serve /metrics on PORT' });
  }
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ChatopsError('CONFIG_INVALID', `METRICS_PORT is the same as PORT (${port})`, { hint: 'Give /metrics another port, or unset METRICS_PORT to serve it on PORT' });
  }
  return metricsPort;
}

const DEFAULT_MAAS_MAX_BODY_MIB = 64;

/** MAAS_MAX_BODY_MIB (default 64): a MAAS answer longer than this is refused, not read. */
export function readMaasMaxBodyBytes(env: NodeJS.ProcessEnv): number {
  const raw = env.MAAS_MAX_BODY_MIB;
  const mib = raw === undefined || raw === '' ? DEFAULT_MAAS_MAX_BODY_MIB : Number(raw);
  if (!Number.isInteger(mib) || mib < 1 || mib > 4096) {
    throw new ChatopsError('CONFIG_INVALID', `MAAS_MAX_BODY_MIB is "${String(raw).slice(0, 40)}"`, {
      hint: `Set MAAS_MAX_BODY_MIB to a whole number of MiB from 1 to 4096 (default ${DEFAULT_MAAS_MAX_BODY_MIB})`,
    });
  }
  return mib * 1024 * 1024;
}

export function requireSlackEnv(env: RuntimeEnv): { botToken: string } {
  if (!env.botToken) throw new ChatopsError('CONFIG_INVALID', 'SLACK_BOT_TOKEN is not set', { hint: 'Export the bot token (xoxb-...) from your Slack app' });
  if (env.mode === 'http' && !env.signingSecret) {
    throw new ChatopsError('CONFIG_INVALID', 'SLACK_SIGNING_SECRET is not set (HTTP mode)', { hint: 'Export the signing secret, or use Socket Mode with SLACK_APP_TOKEN' });
  }
  if (env.mode === 'socket' && !env.appToken) {
    throw new ChatopsError('CONFIG_INVALID', 'SLACK_APP_TOKEN is not set (Socket Mode)', { hint: 'Export the app-level token (xapp-...) or set SLACK_MODE=http' });
  }
  return { botToken: env.botToken };
}

/** Credentials from the environment are secrets too: the redaction pass must know them. */
export function envSecrets(env: RuntimeEnv, raw: NodeJS.ProcessEnv = {}): string[] {
  return [env.botToken, env.signingSecret, env.appToken, env.alertmanagerToken, raw.DASHBOARD_PASSWORD, redisPassword(env.redisUrl), raw.REDIS_PASSWORD, raw.REDIS_SENTINEL_PASSWORD].filter((s): s is string => Boolean(s));
}

function redisPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}
