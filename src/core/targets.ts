import type { ClusterConfig, Config, SiteConfig } from './config.ts';
import { UnknownTargetError } from './errors.ts';
import { describeError } from './errors.ts';
import { forEachLimited } from './for-each-limited.ts';
import { finishReport, probeFailed, type Report, type ReportKind } from './report.ts';

export type TargetKind = 'site' | 'cluster';

/** The config of a target, by its kind: a site or a cluster, each carrying its name. */
export interface TargetConfigs {
  site: SiteConfig;
  cluster: ClusterConfig;
}

export type TargetConfig<K extends TargetKind = TargetKind> = TargetConfigs[K];

function configsOf<K extends TargetKind>(config: Config, kind: K): Record<string, TargetConfig<K>> {
  return (kind === 'site' ? config.sites : config.clusters) as Record<string, TargetConfig<K>>;
}

export function knownTargets(config: Config, kind: TargetKind): string[] {
  return Object.keys(configsOf(config, kind)).sort();
}

/** `all` (every target of the kind, by name) or one configured name; anything else is an UnknownTargetError listing the known ones. */
export function resolveTargets<K extends TargetKind>(config: Config, kind: K, target: string): TargetConfig<K>[] {
  const configs = configsOf(config, kind);
  const known = knownTargets(config, kind);
  const names = target === 'all' ? known : [target];
  return names.map((name) => {
    const found = Object.hasOwn(configs, name) ? configs[name] : undefined;
    if (!found) throw new UnknownTargetError(kind, target, known);
    return found;
  });
}

/** One configured target by name (never `all`). */
export function resolveTarget<K extends TargetKind>(config: Config, kind: K, name: string): TargetConfig<K> {
  const configs = configsOf(config, kind);
  const found = name !== 'all' && Object.hasOwn(configs, name) ? configs[name] : undefined;
  if (!found) throw new UnknownTargetError(kind, name, knownTargets(config, kind));
  return found;
}

/** Targets of an `all` checked at once (config `concurrency.targets`): each holds its MAAS lists and SSH sessions while it runs. */
export const DEFAULT_TARGET_CONCURRENCY = 4;

/**
 * Runs one check per target, at most `concurrency` at a time; the reports keep the targets' order.
 * A target that throws becomes a PROBE_FAILED report, never a crash.
 */
export async function runPerTarget<T extends { name: string }>(
  kind: ReportKind,
  targets: readonly T[],
  check: (target: T) => Promise<Report>,
  concurrency: number = DEFAULT_TARGET_CONCURRENCY,
): Promise<Report[]> {
  const reports: Report[] = [];
  await forEachLimited(targets, concurrency, async (target, index) => {
    const startedAt = new Date();
    try {
      reports[index] = await check(target);
    } catch (err) {
      reports[index] = finishReport(
        { kind, target: target.name, verdict: `Could not check ${target.name}`, findings: [probeFailed(target.name, describeError(err))] },
        startedAt,
      );
    }
  });
  return reports;
}
