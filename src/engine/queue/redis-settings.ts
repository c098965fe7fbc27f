import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/errors.ts';
import type { RedisConfigBlock } from '../../core/config.ts';

export type { RedisConfigBlock } from '../../core/config.ts';

/**
 * Where the queues' Redis is and how to log in, from the environment or the config file's
 * `redis:` block. The environment wins: when REDIS_URL or REDIS_SENTINELS is set, the `redis:`
 * block is ignored as a whole (never merged key by key, so one place says everything).
 *
 *   REDIS_URL                  redis://[user:password@]host:port[/db], or rediss:// for TLS
 *   REDIS_TLS_CA               PEM file of the CA that signed the server's certificate (TLS only)
 *   REDIS_SENTINELS            host:port,host:port,…   (instead of REDIS_URL)
 *   REDIS_SENTINEL_NAME        the primary's name as the sentinels know it (`sentinel monitor <name> …`)
 *   REDIS_SENTINEL_USERNAME / REDIS_SENTINEL_PASSWORD   when the sentinels require a login
 *   REDIS_USERNAME / REDIS_PASSWORD   the login on the primary (Sentinel; with REDIS_URL only when the URL has none)
 */

export interface HostPort {
  host: string;
  port: number;
}

export interface RedisLogin {
  username?: string;
  password?: string;
}

interface CommonSettings extends RedisLogin {
  /** PEM text of the CA; present = TLS. */
  tlsCa?: string;
  /** Which setting named the CA file (for messages). */
  tlsCaFrom?: string;
}

export interface UrlSettings extends CommonSettings {
  mode: 'url';
  url: string;
}

export interface SentinelSettings extends CommonSettings {
  mode: 'sentinel';
  sentinels: HostPort[];
  name: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  db?: number;
}

export type RedisSettings = UrlSettings | SentinelSettings;

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export interface RedisSettingsResult {
  settings: RedisSettings;
  warnings: string[];
}

/** Reads and checks every Redis setting; a bad one throws a ConfigError naming it and the fix. */
export function redisSettingsFrom(
  env: NodeJS.ProcessEnv,
  block?: RedisConfigBlock,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): RedisSettingsResult {
  const warnings: string[] = [];
  const url = nonEmpty(env.REDIS_URL);
  const sentinels = nonEmpty(env.REDIS_SENTINELS);
  if (url && sentinels) {
    throw new ConfigError('REDIS_URL and REDIS_SENTINELS are both set', 'Set REDIS_SENTINELS (with REDIS_SENTINEL_NAME) for Sentinel, or REDIS_URL for one Redis, not both');
  }
  if (!sentinels && nonEmpty(env.REDIS_SENTINEL_NAME)) {
    throw new ConfigError('REDIS_SENTINEL_NAME is set but REDIS_SENTINELS is not', 'Set REDIS_SENTINELS=host:port,host:port,… to the sentinels that monitor it');
  }
  if ((url || sentinels) && block) warnings.push('the config file\'s redis: block is ignored: REDIS_URL or REDIS_SENTINELS is set, and the environment wins');
  const login = loginFrom(env.REDIS_USERNAME, env.REDIS_PASSWORD, 'REDIS_USERNAME', 'REDIS_PASSWORD');
  const tls = tlsFrom(env.REDIS_TLS_CA, 'REDIS_TLS_CA', readFile);
  if (sentinels) {
    const name = nonEmpty(env.REDIS_SENTINEL_NAME);
    if (!name) throw new ConfigError('REDIS_SENTINELS is set but REDIS_SENTINEL_NAME is not', 'Set REDIS_SENTINEL_NAME to the name in the sentinels\' `sentinel monitor <name> …` line');
    checkName(name, 'REDIS_SENTINEL_NAME');
    const sentinelLogin = loginFrom(env.REDIS_SENTINEL_USERNAME, env.REDIS_SENTINEL_PASSWORD, 'REDIS_SENTINEL_USERNAME', 'REDIS_SENTINEL_PASSWORD');
    return { settings: sentinelSettings(parseSentinels(sentinels, 'REDIS_SENTINELS'), name, login, sentinelLogin, tls), warnings };
  }
  if (url || !block) return { settings: urlSettings(url ?? DEFAULT_REDIS_URL, login, tls), warnings };
  if (!block.sentinels.length) throw new ConfigError('redis.sentinels is empty', 'List the sentinels as host:port, or remove the redis: block and set REDIS_URL');
  checkName(block.sentinelName, 'redis.sentinelName');
  const blockLogin = loginFrom(block.username, block.password?.reveal(), 'redis.username', 'redis.password');
  const blockSentinelLogin = loginFrom(block.sentinelUsername, block.sentinelPassword?.reveal(), 'redis.sentinelUsername', 'redis.sentinelPassword');
  const settings = sentinelSettings(parseSentinels(block.sentinels.join(','), 'redis.sentinels'), block.sentinelName, blockLogin, blockSentinelLogin, tlsFrom(block.tlsCa, 'redis.tlsCa', readFile));
  if (block.db !== undefined) settings.db = block.db;
  return { settings, warnings };
}

/** Where Redis is, for logs and messages: never a password. */
export function describeRedis(settings: RedisSettings): string {
  if (settings.mode === 'sentinel') {
    return `Sentinel primary "${settings.name}" via ${settings.sentinels.map((s) => `${s.host}:${s.port}`).join(',')}${settings.tlsCa ? ' (TLS)' : ''}`;
  }
  try {
    const u = new URL(settings.url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return 'REDIS_URL';
  }
}

/** Every password the settings hold, for the redaction pass. */
export function redisSecrets(settings: RedisSettings): string[] {
  const out = [settings.password];
  if (settings.mode === 'sentinel') out.push(settings.sentinelPassword);
  else out.push(urlPassword(settings.url));
  return out.filter((s): s is string => Boolean(s));
}

function sentinelSettings(sentinels: HostPort[], name: string, login: RedisLogin, sentinelLogin: RedisLogin, tls: Pick<CommonSettings, 'tlsCa' | 'tlsCaFrom'>): SentinelSettings {
  const out: SentinelSettings = { mode: 'sentinel', sentinels, name, ...login, ...tls };
  if (sentinelLogin.username) out.sentinelUsername = sentinelLogin.username;
  if (sentinelLogin.password) out.sentinelPassword = sentinelLogin.password;
  return out;
}

function urlSettings(url: string, login: RedisLogin, tls: Pick<CommonSettings, 'tlsCa' | 'tlsCaFrom'>): UrlSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL is not a URL', 'Use redis://[user:password@]host:port[/db], or rediss://… for TLS (percent-encode special characters in the password)');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError(`REDIS_URL has the scheme "${parsed.protocol.slice(0, 20)}"`, 'Use redis://host:port, or rediss://host:port for TLS');
  }
  if (!parsed.hostname) throw new ConfigError('REDIS_URL has no host', 'Use redis://host:port');
  if (parsed.pathname.length > 1 && !/^\/\d{1,2}$/.test(parsed.pathname)) {
    throw new ConfigError('REDIS_URL has a path that is not a database number', 'End the URL with /<db number> (0-15) or nothing');
  }
  if (parsed.username && !parsed.password) {
    throw new ConfigError('REDIS_URL has a user name but no password', 'Use redis://user:password@host:port for an ACL user');
  }
  if (tls.tlsCa && parsed.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_TLS_CA is set but REDIS_URL starts with redis://', 'Use rediss://host:port for TLS, or unset REDIS_TLS_CA');
  }
  const out: UrlSettings = { mode: 'url', url, ...tls };
  // Credentials in the URL win; the separate variables serve a URL without them.
  if (!parsed.password) Object.assign(out, login);
  return out;
}

function parseSentinels(list: string, setting: string): HostPort[] {
  const entries = list.split(',').map((s) => s.trim());
  return entries.map((entry) => {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) {
      throw new ConfigError(`${setting}: "${entry.slice(0, 80)}" is not host:port`, `Write ${setting} as host:port,host:port,… (the sentinels' port, usually 26379)`);
    }
    return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
  });
}

function loginFrom(username: string | undefined, password: string | undefined, userSetting: string, passwordSetting: string): RedisLogin {
  const user = nonEmpty(username);
  const pass = nonEmpty(password);
  if (user && !pass) throw new ConfigError(`${userSetting} is set but ${passwordSetting} is not`, `Set ${passwordSetting} to that ACL user's password`);
  const out: RedisLogin = {};
  if (user) out.username = user;
  if (pass) out.password = pass;
  return out;
}

function tlsFrom(file: string | undefined, setting: string, readFile: (path: string) => string): Pick<CommonSettings, 'tlsCa' | 'tlsCaFrom'> {
  const path = nonEmpty(file);
  if (!path) return {};
  let pem: string;
  try {
    pem = readFile(path);
  } catch (err) {
    throw new ConfigError(`${setting}: cannot read ${path.slice(0, 200)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, 'Point it at the PEM file of the CA that signed the Redis server\'s certificate, readable by the bot');
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`${setting}: ${path.slice(0, 200)} holds no PEM certificate`, 'Use the CA certificate in PEM form (-----BEGIN CERTIFICATE-----)');
  }
  return { tlsCa: pem, tlsCaFrom: setting };
}

function checkName(name: string, setting: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new ConfigError(`${setting} is "${name.slice(0, 80)}"`, 'Use the primary\'s name as in `sentinel monitor <name> …`: letters, digits, ".", "_" or "-"');
  }
}

function urlPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
