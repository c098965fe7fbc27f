import type { Adapters } from '../adapters/adapters.ts';
import type { Config } from '../core/config.ts';
import type { Logger } from '../core/log.ts';
import type { Finding } from '../core/report.ts';
import type { RepairSpec } from '../engine/repair/repair-spec.ts';
import type { TargetConfig, TargetKind } from '../core/targets.ts';

/** A `schedules` key of the config: how often the drift scan of a check runs. */
export type ScheduleKey = keyof Config['schedules'];

/** What a check reads with: the config, the adapters to MAAS, SSH and Kubernetes, a logger. */
export interface CheckContext {
  config: Config;
  adapters: Adapters;
  log: Logger;
  signal?: AbortSignal;
}

/** What evaluate makes of a snapshot: the verdict a person reads first, and the findings behind it. */
export interface Evaluation {
  verdict: string;
  findings: Finding[];
}

/** The repair command that plans the fix of what a check finds. */
export interface FixCommandSpec<Name extends string = string> {
  readonly name: Name;
  /** What its plan does, for its help lines: Slack's "plan <this>, posted for an approver's Approve", the terminal's "plan (and with --apply, run) <this>". */
  readonly plans: string;
  /** How it plans from a fresh check and carries out its typed steps (src/engine/repair/repair-spec.ts). */
  readonly repair: RepairSpec;
}

/**
 * `same-target`: identical requests (same check, same target) within the dedup window share one run
 * (src/engine/queue/dedup.ts); `none`: every request runs on its own.
 */
export type DedupRule = 'same-target' | 'none';

/**
 * One check, the product: gather reads a target into a Snapshot, evaluate (pure) turns it into
 * Findings and a verdict. Everything else (its /maas and terminal command, its job and queue, its
 * drift scan, deduplication, help line, metric labels, report kind) is derived from this by
 * src/features/registry.ts.
 */
export interface CheckSpec<
  Name extends string = string,
  Kind extends TargetKind = TargetKind,
  Snapshot = unknown,
  Schedule extends ScheduleKey | undefined = ScheduleKey | undefined,
  Fix extends string = string,
> {
  /** The command, job, queue, report kind and metric label: `dns-check`. */
  readonly name: Name;
  /** What it takes: `<site>|all` or `<cluster>|all`. */
  readonly targetKind: Kind;
  /** The `schedules` key that times its drift scan; absent: it is never scanned (only run on request). */
  readonly schedule?: Schedule;
  /** Its help line, after the usage. */
  readonly summary: string;
  /** The repair command an alert's "Plan fix" leads to; absent: the check has no repair. */
  readonly fix?: FixCommandSpec<Fix>;
  readonly dedup: DedupRule;
  /** Whether a scan of the target would look at anything (a site without `rack:` has no resolver). */
  appliesTo(target: TargetConfig<Kind>): boolean;
  /** The remote reads (probes) of one target. Throws when the target cannot be read at all. */
  gather(ctx: CheckContext, target: TargetConfig<Kind>): Promise<Snapshot>;
  /** Pure: the findings and verdict of a snapshot. */
  evaluate(snapshot: Snapshot): Evaluation;
  /** Optional read-only evidence added to the findings once the verdict is made (mac-diff's MAAS witnesses). */
  witness?(ctx: CheckContext, target: TargetConfig<Kind>, findings: Finding[]): Promise<Finding[]>;
}

/** Any registered check, whatever its snapshot. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the snapshot type is each check's own; gather's output only ever reaches its own evaluate
export type AnyCheckSpec = CheckSpec<string, TargetKind, any, ScheduleKey | undefined, string>;

/** Declares a check, keeping its name, target kind, schedule and fix as literal types (the registry derives its unions from them). */
export function defineCheck<const Name extends string, const Kind extends TargetKind, Snapshot, const Schedule extends ScheduleKey | undefined = undefined, const Fix extends string = never>(
  spec: CheckSpec<Name, Kind, Snapshot, Schedule, Fix>,
): CheckSpec<Name, Kind, Snapshot, Schedule, Fix> {
  return spec;
}

/** The `kind` label values a check brings to the metrics: its own name (jobs, open alerts) and its repair's (jobs, repairs, repair steps). */
export function metricLabels(spec: Pick<AnyCheckSpec, 'name' | 'fix'>): string[] {
  return spec.fix ? [spec.name, spec.fix.name] : [spec.name];
}

/** The usage of a check command: `dns-check <cluster>|all`. */
export function checkUsage(spec: Pick<AnyCheckSpec, 'name' | 'targetKind'>): string {
  return `${spec.name} <${spec.targetKind}>|all`;
}

/** The usage of a fix command: `fix-dns <cluster>` (one target: a repair is planned and approved per target). */
export function fixUsage(fix: FixCommandSpec, targetKind: TargetKind): string {
  return `${fix.name} <${targetKind}>`;
}
