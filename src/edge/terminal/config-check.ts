import { connect } from 'node:net';
import { loadConfig, type LoadedConfig } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import { createRedis, pingRedis } from '../../engine/queue/redis-connection.ts';
import { describeRedis, redisSettingsFrom } from '../../engine/queue/redis-settings.ts';

/*
 * `maas-chatops config check`: what a process would do with the config before it serves anything:
 * load and validate it, read every secret it references (the file: ones too, which processes
 * read only when first used), then say which of its peers answer a TCP connection.
 * `--offline` (a checkout, CI) checks the shape only: no peer, no secret file, and an env:
 * variable that is not set here is named, not required.
 */

export interface ConfigCheckOptions {
  path?: string;
  env: NodeJS.ProcessEnv;
  readFile?: (path: string) => string;
  /** Skip the reachability probes (a machine outside the datacentre, CI). */
  offline?: boolean;
  /** false: read no secret file and accept unset env: variables, naming each secret left unread. Default true. */
  readSecrets?: boolean;
  /** How long one TCP connect may take; default 3 s. */
  connectTimeoutMs?: number;
}

export interface ConfigCheckResult {
  /** 0 every secret read and every peer reached, 64 a config or secret error, 2 a peer not reached. */
  code: 0 | 2 | 64;
  lines: string[];
}

export async function checkConfig(options: ConfigCheckOptions): Promise<ConfigCheckResult> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({ env: options.env, deferUnsetEnv: options.readSecrets === false, ...(options.path ? { path: options.path } : {}), ...(options.readFile ? { readFile: options.readFile } : {}) });
  } catch (err) {
    return { code: 64, lines: [`config: ${describeError(err)}`] };
  }
  const { config } = loaded;
  const lines = [`config ${config.path}: valid (${count(config.maas, 'MAAS region')}, ${count(config.sites, 'site')}, ${count(config.clusters, 'cluster')})`];
  lines.push(...loaded.warnings.map((w) => `warning: ${w}`));
  if (options.readSecrets === false) return { code: 0, lines: [...lines, ...unreadSecretLines(loaded), 'reachability: not probed (--offline)'] };
  let secretsOk = true;
  for (const { where, secret } of loaded.deferred) {
    try {
      secret.reveal();
      lines.push(`secret ${where} (${secret.source}): read`);
    } catch (err) {
      secretsOk = false;
      lines.push(`secret ${where} (${secret.source}): ${describeError(err)}`);
    }
  }
  if (!secretsOk) return { code: 64, lines };
  if (options.offline) {
    lines.push('reachability: not probed (--offline)');
    return { code: 0, lines };
  }
  const timeoutMs = options.connectTimeoutMs ?? 3_000;
  let reachedAll = true;
  for (const peer of peersOf(loaded)) {
    const outcome = await tcpReach(peer.host, peer.port, timeoutMs);
    reachedAll &&= outcome === 'reachable';
    lines.push(`reach ${peer.what} ${peer.host}:${peer.port}: ${outcome}`);
  }
  const redis = await redisReach(options.env, loaded);
  reachedAll &&= redis.ok;
  lines.push(redis.line);
  return { code: reachedAll ? 0 : 2, lines };
}

/** --offline: each secret left unread, and where to read them. */
function unreadSecretLines(loaded: LoadedConfig): string[] {
  const lines = loaded.deferred.map(({ where, secret }) => `secret ${where} (${secret.source}): not read (--offline${secret.source.startsWith('env:') ? `; ${secret.source.slice(4)} is not set` : ''})`);
  if (lines.length) lines.push(`${lines.length} secret${lines.length === 1 ? '' : 's'} not read: run \`maas-chatops config check\` without --offline where the workers run (their env and /secrets) to read them`);
  return lines;
}

function count(group: object, noun: string): string {
  const n = Object.keys(group).length;
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

interface Peer {
  what: string;
  host: string;
  port: number;
}

/** The peers the config names by address: MAAS regions and the racks' SSH and resolver endpoints. */
function peersOf(loaded: LoadedConfig): Peer[] {
  const peers: Peer[] = [];
  for (const region of Object.values(loaded.config.maas)) {
    const url = new URL(region.url);
    peers.push({ what: `maas ${region.name}`, host: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) });
  }
  for (const site of Object.values(loaded.config.sites)) {
    if (site.rack?.ssh) peers.push({ what: `ssh sites.${site.name}.rack`, host: site.rack.ssh.host, port: site.rack.ssh.port });
  }
  return peers;
}

function tcpReach(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (outcome: string) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => done('reachable'));
    socket.once('timeout', () => done(`unreachable (no answer within ${timeoutMs / 1000} s)`));
    socket.once('error', (err: NodeJS.ErrnoException) => done(`unreachable (${err.code ?? err.message})`));
  });
}

async function redisReach(env: NodeJS.ProcessEnv, loaded: LoadedConfig): Promise<{ ok: boolean; line: string }> {
  const { settings } = redisSettingsFrom(env, loaded.config.redis);
  const redis = createRedis(settings, 'producer');
  redis.on('error', () => undefined);
  try {
    const ok = await pingRedis(redis, 3_000);
    return { ok, line: `reach redis ${describeRedis(settings)}: ${ok ? 'answers PING' : 'no answer to PING'}` };
  } finally {
    redis.disconnect();
  }
}
