import type { Config, SiteConfig } from '../config.ts';
import type { TargetKind } from '../targets.ts';

/**
 * The checks a scan runs: the kind of target each takes, the `schedules` key that times it and
 * the fix an alert's "Plan fix" button leads to.
 */
export const SCAN_CHECKS = {
  'dns-check': { targetKind: 'cluster', schedule: 'dns', fix: 'fix-dns' },
  'resolver-check': { targetKind: 'site', schedule: 'resolver', fix: 'fix-resolver' },
  'mac-diff': { targetKind: 'site', schedule: 'macs', fix: 'fix-macs' },
} as const satisfies Record<string, { targetKind: TargetKind; schedule: keyof Config['schedules']; fix: string }>;

export type ScanCheck = keyof typeof SCAN_CHECKS;

export interface ScanTarget {
  check: ScanCheck;
  target: string;
}

export function isScanCheck(name: unknown): name is ScanCheck {
  return typeof name === 'string' && Object.hasOwn(SCAN_CHECKS, name);
}

/**
 * Whether a check has something to look at on a target. A site without `rack` has no resolver
 * to probe, and one without `vmHosts` has no SSH access to its VM hosts: scanning those would
 * only raise a standing "could not check" alert.
 */
export function checkApplies(config: Config, check: ScanCheck, target: string): boolean {
  if (SCAN_CHECKS[check].targetKind === 'cluster') return Object.hasOwn(config.clusters, target);
  const site = Object.hasOwn(config.sites, target) ? config.sites[target] : undefined;
  if (!site) return false;
  return check === 'resolver-check' ? site.rack !== undefined : hasVmHostAccess(site);
}

function hasVmHostAccess(site: SiteConfig): boolean {
  return Object.keys(site.vmHosts).length > 0 || Object.keys(site.vmHostDefaults).length > 0;
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
