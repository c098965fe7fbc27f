import { secretValues, type LoadedConfig } from '../../core/config.ts';
import { readRuntimeEnv, envSecrets } from '../../core/env.ts';
import { describeError } from '../../core/errors.ts';
import { createLogger } from '../../core/log.ts';
import { DEFAULT_PREFIX } from '../queue/queue-names.ts';
import { createRedis, pingRedis } from '../queue/redis-connection.ts';
import { describeRedis, redisSecrets, redisSettingsFrom } from '../queue/redis-settings.ts';
import { configNames, createRedactor } from '../../core/redact.ts';
import { knownTargets } from '../../core/targets.ts';
import { auditTextForTerminal } from './audit-text.ts';
import { auditKey, createAuditLog } from './audit-log.ts';

export interface AuditCliOptions {
  loaded: LoadedConfig;
  env: NodeJS.ProcessEnv;
  /** The positionals after `audit`: `[target] [count]`. */
  args: string[];
  json: boolean;
  out: (s: string) => void;
  err: (s: string) => void;
  /** The BullMQ key prefix; default maas-chatops (tests pass their own). */
  prefix?: string;
}

const USAGE = 'usage: maas-chatops audit [site|cluster] [count] [--json]';

/**
 * `maas-chatops audit [target] [count]`: the newest audit entries from REDIS_URL, newest first.
 * Exit 0, 64 on a usage error or an unknown target, 2 when Redis cannot be read.
 */
export async function runAuditCli(options: AuditCliOptions): Promise<number> {
  const { config } = options.loaded;
  let target: string | undefined;
  let limit = 50;
  for (const arg of options.args) {
    if (/^\d{1,4}$/.test(arg)) limit = Number(arg);
    else if (target === undefined) target = arg;
    else {
      options.err(USAGE);
      return 64;
    }
  }
  const known = [...new Set([...knownTargets(config, 'site'), ...knownTargets(config, 'cluster')])].sort();
  if (target !== undefined && !known.includes(target)) {
    options.err(`maas-chatops audit: no site or cluster "${target.slice(0, 63)}"; known: ${known.join(', ') || 'none configured'}`);
    return 64;
  }
  const env = readRuntimeEnv(options.env);
  const { settings } = redisSettingsFrom(options.env, config.redis);
  const redact = createRedactor(secretValues(options.loaded, [...envSecrets(env, options.env), ...redisSecrets(settings)]), { names: configNames(options.loaded.config) });
  const redis = createRedis(settings, 'producer');
  redis.on('error', () => undefined);
  try {
    if (!(await pingRedis(redis, 3_000))) {
      options.err(redact(`maas-chatops audit: Redis at ${describeRedis(settings)} does not answer. Check REDIS_URL (or REDIS_SENTINELS) and that Redis is running.`));
      return 2;
    }
    const log = createLogger({ redact, level: 'silent' });
    const audit = createAuditLog({ redis, key: auditKey(config, options.prefix ?? DEFAULT_PREFIX), log, redact });
    const entries = await audit.latest({ ...(target ? { target } : {}), limit });
    options.out(redact(options.json ? JSON.stringify(entries, null, 2) : auditTextForTerminal(entries)));
    return 0;
  } catch (err) {
    options.err(redact(`maas-chatops audit: could not read the audit trail: ${describeError(err)}`));
    return 2;
  } finally {
    redis.disconnect();
  }
}
