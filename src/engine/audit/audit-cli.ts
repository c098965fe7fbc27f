import type { LoadedConfig } from '../../core/config.ts';
import { auditTextForTerminal } from './audit-text.ts';
import { trailTargets, withAuditTrail } from './audit-trail-cli.ts';

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
  const known = trailTargets(options.loaded);
  if (target !== undefined && !known.includes(target)) {
    options.err(`maas-chatops audit: no site or cluster "${target.slice(0, 63)}"; known: ${known.join(', ') || 'none configured'}`);
    return 64;
  }
  return withAuditTrail({ ...options, command: 'audit' }, async (audit, redact) => {
    const entries = await audit.latest({ ...(target ? { target } : {}), limit });
    options.out(redact(options.json ? JSON.stringify(entries, null, 2) : auditTextForTerminal(entries)));
    return 0;
  });
}
