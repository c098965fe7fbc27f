import type { Config } from '../../core/config.ts';
import type { ScheduleKey } from '../../features/check-spec.ts';
import { CHECKS, findCheck, type ScanCheck } from '../../features/registry.ts';
import { resolveTarget, type TargetKind } from '../../core/targets.ts';

export type { ScanCheck };

/** What a scan needs to know of a check: the kind of target, the `schedules` key that times it, the fix an alert's "Plan fix" button leads to. */
export interface ScanCheckInfo {
  targetKind: TargetKind;
  schedule: ScheduleKey;
  fix?: string;
}

/** The checks a scan runs: every registered check with a `schedules` key. */
export const SCAN_CHECKS: Readonly<Record<ScanCheck, ScanCheckInfo>> = Object.fromEntries(
  CHECKS.flatMap((c) => (c.schedule ? [[c.name, { targetKind: c.targetKind, schedule: c.schedule, ...(c.fix ? { fix: c.fix.name } : {}) }]] : [])),
) as Record<ScanCheck, ScanCheckInfo>;

export interface ScanTarget {
  check: ScanCheck;
  target: string;
}

export function isScanCheck(name: unknown): name is ScanCheck {
  return typeof name === 'string' && Object.hasOwn(SCAN_CHECKS, name);
}

/**
 * Whether a check has something to look at on a target (the check's appliesTo): scanning a site
 * without `rack` for its resolver, or without `vmHosts` for its MACs, would only raise a standing
 * "could not check" alert.
 */
export function checkApplies(config: Config, check: ScanCheck, target: string): boolean {
  const spec = findCheck(check);
  if (!spec) return false;
  const configs = spec.targetKind === 'site' ? config.sites : config.clusters;
  if (!Object.hasOwn(configs, target)) return false;
  return applies(spec, config, target);
}

function applies(spec: NonNullable<ReturnType<typeof findCheck>>, config: Config, target: string): boolean {
  return spec.targetKind === 'site' ? spec.appliesTo(resolveTarget(config, 'site', target)) : spec.appliesTo(resolveTarget(config, 'cluster', target));
}

/** Every (check, target) that applies to one configured name, or to all with `all`. */
export function scanTargetsFor(config: Config, name: string, only?: ScanCheck): ScanTarget[] {
  const names = name === 'all' ? [...new Set([...Object.keys(config.clusters), ...Object.keys(config.sites)])].sort() : [name];
  const checks = only ? [only] : (Object.keys(SCAN_CHECKS) as ScanCheck[]);
  return names.flatMap((target) => checks.filter((check) => checkApplies(config, check, target)).map((check) => ({ check, target })));
}

/** What the schedules ask for: every applicable (check, target) whose `schedules` entry is set. */
export function scheduledScans(config: Config): (ScanTarget & { everyMs: number })[] {
  return scanTargetsFor(config, 'all').flatMap((scan) => {
    const everyMs = config.schedules[SCAN_CHECKS[scan.check].schedule];
    return everyMs ? [{ ...scan, everyMs }] : [];
  });
}
