import type { LoadedConfig } from '../../core/config.ts';
import { parseDuration } from '../../core/duration.ts';
import { trailTargets, withAuditTrail } from './audit-trail-cli.ts';
import { buildTimeline, timelineMarkdown } from './timeline.ts';

export interface TimelineCliOptions {
  loaded: LoadedConfig;
  env: NodeJS.ProcessEnv;
  /** The positionals after `timeline`: `[target]` (a site, a cluster or `all`). */
  args: string[];
  /** `--since`: how far back, as `30m`, `2h`, `1d`; default 24h. */
  since?: string;
  /** `--format md|json`; `--json` means json. */
  format?: string;
  out: (s: string) => void;
  err: (s: string) => void;
  prefix?: string;
  now?: () => number;
}

export const DEFAULT_TIMELINE_SPAN = '24h';
const USAGE = 'usage: maas-chatops timeline [site|cluster|all] [--since 2h] [--format md|json]';

/**
 * `maas-chatops timeline [target]`: every event of the audit trail for a target (or all) since a
 * time, oldest first, as Markdown or one JSON array. Exit 0, 64 on a usage error, 2 when Redis
 * cannot be read.
 */
export async function runTimelineCli(options: TimelineCliOptions): Promise<number> {
  const [target = 'all', ...rest] = options.args;
  const format = options.format ?? 'md';
  const spanMs = parseDuration(options.since ?? DEFAULT_TIMELINE_SPAN);
  const known = trailTargets(options.loaded);
  const problem =
    rest.length > 0
      ? USAGE
      : format !== 'md' && format !== 'json'
        ? `maas-chatops timeline: --format takes md or json, not "${format.slice(0, 20)}"`
        : spanMs === null
          ? `maas-chatops timeline: --since takes a duration such as 30m, 2h or 1d, not "${(options.since ?? '').slice(0, 20)}"`
          : target !== 'all' && !known.includes(target)
            ? `maas-chatops timeline: no site or cluster "${target.slice(0, 63)}"; known: ${known.join(', ') || 'none configured'}`
            : undefined;
  if (problem || spanMs === null) {
    options.err(problem ?? USAGE);
    return 64;
  }
  const until = (options.now ?? Date.now)();
  const since = until - spanMs;
  return withAuditTrail({ ...options, command: 'timeline' }, async (audit, redact) => {
    const { entries, truncated } = await audit.range({ ...(target !== 'all' ? { target } : {}), since });
    const timeline = buildTimeline(entries, { target, since, until, truncated });
    options.out(redact(format === 'json' ? JSON.stringify(timeline.events, null, 2) : timelineMarkdown(timeline)));
    return 0;
  });
}
