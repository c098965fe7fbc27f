import { statusOf, type Finding, type Report, type Severity, type Status } from '../../core/report.ts';
import type { AlertKind } from './alert-record.ts';

/** Findings that say part of the target was not looked at, rather than that something drifted. */
const UNCHECKED_CODES = new Set(['PROBE_FAILED', 'MAC_HOST_UNREACHABLE']);
const ALERTING: ReadonlySet<Severity> = new Set(['warning', 'critical', 'error']);

export interface KindObservation {
  kind: AlertKind;
  findings: Finding[];
  verdict: string;
  status: Status;
}

/** What one scan of one (check, target) saw, split by kind of problem. */
export interface ScanObservation {
  check: string;
  target: string;
  drift: KindObservation;
  unchecked: KindObservation;
  /**
   * Part of the target could not be checked: drift missing from this scan may still be there,
   * so it must not count as fixed.
   */
  partial: boolean;
}

export function alertKindOf(finding: Finding): AlertKind | undefined {
  if (UNCHECKED_CODES.has(finding.code)) return 'unchecked';
  return ALERTING.has(finding.severity) ? 'drift' : undefined;
}

export function observeScan(check: string, target: string, reports: readonly Report[]): ScanObservation {
  const all = reports.flatMap((r) => r.findings);
  const drift = all.filter((f) => alertKindOf(f) === 'drift');
  const unchecked = all.filter((f) => alertKindOf(f) === 'unchecked');
  const reportVerdict = reports.find((r) => r.status !== 'ok')?.verdict ?? reports[0]?.verdict ?? '';
  return {
    check,
    target,
    drift: { kind: 'drift', findings: drift, verdict: reportVerdict, status: statusOf(drift) },
    unchecked: { kind: 'unchecked', findings: unchecked, verdict: uncheckedVerdict(check, target, unchecked), status: unchecked.length ? 'error' : 'ok' },
    partial: unchecked.length > 0,
  };
}

function uncheckedVerdict(check: string, target: string, findings: readonly Finding[]): string {
  const [first] = findings;
  if (!first) return '';
  const more = findings.length > 1 ? ` (+${findings.length - 1} more)` : '';
  const whole = first.code === 'PROBE_FAILED' && first.subject === target;
  const what = whole ? `Could not check ${target} (${check})` : `Could not check all of ${target} (${check})`;
  return `${what}: ${first.summary}${more}`;
}
