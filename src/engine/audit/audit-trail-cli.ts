import { secretValues, type LoadedConfig } from '../../core/config.ts';
import { readRuntimeEnv, envSecrets } from '../../core/env.ts';
import { describeError } from '../../core/errors.ts';
import { createLogger } from '../../core/log.ts';
import { configNames, createRedactor, type Redactor } from '../../core/redact.ts';
import { knownTargets } from '../../core/targets.ts';
import { DEFAULT_PREFIX } from '../queue/queue-names.ts';
import { createRedis, pingRedis } from '../queue/redis-connection.ts';
import { describeRedis, redisSecrets, redisSettingsFrom } from '../queue/redis-settings.ts';
import { auditKey, createAuditLog, type AuditLog } from './audit-log.ts';

export interface AuditTrailCliOptions {
  /** The command's name in its messages: `audit`, `timeline`. */
  command: string;
  loaded: LoadedConfig;
  env: NodeJS.ProcessEnv;
  err: (s: string) => void;
  /** The BullMQ key prefix; default maas-chatops (tests pass their own). */
  prefix?: string;
}

/** Every site and cluster name, sorted: what a terminal command about the trail accepts as its target. */
export function trailTargets(loaded: LoadedConfig): string[] {
  const { config } = loaded;
  return [...new Set([...knownTargets(config, 'site'), ...knownTargets(config, 'cluster')])].sort();
}

/**
 * Opens the audit trail at REDIS_URL for a terminal command and closes it after `use`. Exit 2 when
 * Redis does not answer or the trail cannot be read; whatever `use` prints passes the redactor.
 */
export async function withAuditTrail(options: AuditTrailCliOptions, use: (audit: AuditLog, redact: Redactor) => Promise<number>): Promise<number> {
  const { config } = options.loaded;
  const env = readRuntimeEnv(options.env);
  const { settings } = redisSettingsFrom(options.env, config.redis);
  const redact = createRedactor(secretValues(options.loaded, [...envSecrets(env, options.env), ...redisSecrets(settings)]), { names: configNames(config) });
  const redis = createRedis(settings, 'producer');
  redis.on('error', () => undefined);
  try {
    if (!(await pingRedis(redis, 3_000))) {
      options.err(redact(`maas-chatops ${options.command}: Redis at ${describeRedis(settings)} does not answer. Check REDIS_URL (or REDIS_SENTINELS) and that Redis is running.`));
      return 2;
    }
    const log = createLogger({ redact, level: 'silent' });
    const audit = createAuditLog({ redis, key: auditKey(config, options.prefix ?? DEFAULT_PREFIX), log, redact });
    return await use(audit, redact);
  } catch (err) {
    options.err(redact(`maas-chatops ${options.command}: could not read the audit trail: ${describeError(err)}`));
    return 2;
  } finally {
    redis.disconnect();
  }
}
