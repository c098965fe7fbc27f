import type { Config } from './config.ts';
import { UnknownTargetError } from './errors.ts';
import { describeError } from './errors.ts';
import { finishReport, probeFailed, type Report, type ReportKind } from './report.ts';

export type TargetKind = 'site' | 'cluster';

export function knownTargets(config: Config, kind: TargetKind): string[] {
  return Object.keys(kind === 'site' ? config.sites : config.clusters).sort();
}

/** `all` or one configured name; anything else is an UnknownTargetError listing the known ones. */
export function resolveTargets(config: Config, kind: TargetKind, target: string): string[] {
  const known = knownTargets(config, kind);
  if (target === 'all') return known;
  if (!known.includes(target)) throw new UnknownTargetError(kind, target, known);
  return [target];
}

/** Runs one check per target; a target that throws becomes a PROBE_FAILED report, never a crash. */
export async function runPerTarget(
  kind: ReportKind,
  targets: string[],
  check: (target: string) => Promise<Report>,
): Promise<Report[]> {
  return Promise.all(
    targets.map(async (target) => {
      const startedAt = new Date();
      try {
        return await check(target);
      } catch (err) {
        return finishReport(
          { kind, target, verdict: `Could not check ${target}`, findings: [probeFailed(target, describeError(err))] },
          startedAt,
        );
      }
    }),
  );
}
