import { metricLabels, type CheckSpec, type FixCommandSpec } from './check-spec.ts';
import { dnsCheck } from './dns/index.ts';
import { macDiffCheck } from './macs/index.ts';
import { resolverCheck } from './resolver/index.ts';
import { dhcpCheck } from './dhcp/index.ts';

/**
 * Every check, in help order: the one list. The /maas and terminal commands, the jobs and their
 * queues, the drift scans, deduplication, the report kinds, the help text and the metric labels
 * are all derived from it. Adding a check is its folder under src/features/, one line here, and
 * `npm run docs:checks` for the manifest hint, the README row and the findings.md sections (CONTRIBUTING.md).
 */
export const CHECKS = [dnsCheck, resolverCheck, macDiffCheck, dhcpCheck] as const;

export type RegisteredCheck = (typeof CHECKS)[number];
export type CheckName = RegisteredCheck['name'];
/** The repair commands the checks name: `fix-dns`, … */
export type FixName = NonNullable<RegisteredCheck['fix']>['name'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- only the name and schedule are read
type ScannedName<C> = C extends CheckSpec<infer N, any, any, infer S, any> ? ([S] extends [undefined] ? never : N) : never;
/** The checks with a `schedules` key: those a drift scan runs. */
export type ScanCheck = ScannedName<RegisteredCheck>;

export const CHECK_NAMES: readonly CheckName[] = CHECKS.map((c) => c.name);

/** A repair command, with the kind of target it takes and the check whose findings it fixes. */
export interface FixCommandEntry {
  fix: FixCommandSpec<FixName>;
  targetKind: RegisteredCheck['targetKind'];
  check: CheckName;
}

/** Every repair command, once each, in the order of the checks that name it. */
export const FIX_COMMANDS: readonly FixCommandEntry[] = CHECKS.flatMap((c): FixCommandEntry[] => (c.fix ? [{ fix: c.fix, targetKind: c.targetKind, check: c.name }] : [])).filter(
  (entry, i, all) => all.findIndex((e) => e.fix.name === entry.fix.name) === i,
);

export const FIX_NAMES: readonly FixName[] = FIX_COMMANDS.map((f) => f.fix.name);

/** The /maas subcommands that are not a check or a repair; commands/<name>.ts each. */
export const BUILT_IN_COMMANDS = ['help', 'sites', 'alerts', 'silence', 'scan', 'audit', 'timeline'] as const;
export type BuiltInCommand = (typeof BUILT_IN_COMMANDS)[number];

export type CommandName = BuiltInCommand | CheckName | FixName;

/** Every /maas subcommand in help order: help and sites, the checks, the alert and audit commands, the repairs. */
export const COMMAND_NAMES: readonly CommandName[] = ['help', 'sites', ...CHECK_NAMES, 'alerts', 'silence', 'scan', 'audit', 'timeline', ...FIX_NAMES];

/** The scan job: one check run for one target by the drift schedulers (src/edge/alerts/scan-job.ts). */
export const SCAN_JOB = 'scan';

/** Every job kind, each with its own queue: the checks, the repairs, and the scan. */
export const JOB_KINDS: readonly string[] = [...new Set([...CHECKS.flatMap(metricLabels), SCAN_JOB])];

/** What a report can be of: a check or a repair (`ReportKind` in src/core/report.ts is this, as a plain string). */
export type ReportName = CheckName | FixName;

/** The job kinds that are checks (read-only, same answer for the same target): safe to share. */
export const DEDUPLICATED_JOBS: ReadonlySet<string> = new Set(CHECKS.filter((c) => c.dedup === 'same-target').map((c) => c.name));

export function findCheck(name: string): RegisteredCheck | undefined {
  return CHECKS.find((c) => c.name === name);
}
