export type Severity = 'info' | 'warning' | 'critical' | 'error';
export type Status = 'ok' | 'warning' | 'critical' | 'error';
/**
 * A report is of one registered check or of one repair: a name from src/features/registry.ts
 * (`ReportName` there). A plain string here, so that the base layer knows no check.
 */
export type ReportKind = string;

export type FindingCode =
  | 'DNS_RECORD_MISSING'
  | 'DNS_RECORD_AMBIGUOUS'
  | 'DNS_RECORD_EMPTY'
  | 'DNS_EMPTY_HASH_CACHED'
  | 'DNS_DRIFT'
  | 'DNS_HASH_MASKS_DRIFT'
  | 'DNS_CP_NOT_RUNNING'
  | 'DNS_CP_NO_IP_IN_SUBNETS'
  | 'DNS_NOT_MANAGED'
  | 'DNS_CONTROLLER_VULNERABLE'
  | 'RESOLVER_SERVFAIL'
  | 'RESOLVER_NO_REPLY'
  | 'RESOLVER_BAD_ANSWER'
  | 'MAC_DRIFT'
  | 'MAC_AMBIGUOUS'
  | 'MAC_IN_USE'
  | 'MAC_DOMAIN_MISSING'
  | 'MAC_HOST_UNREACHABLE'
  | 'MAC_NOT_VIRSH'
  | 'MAC_WITNESS_UNAVAILABLE'
  | 'DNS_CLIENT_VIEW'
  | 'MAC_CHILD_STALE'
  | 'MAC_LEFT_BROKEN'
  | 'PROBE_FAILED'
  | (string & {});

export interface Finding {
  code: FindingCode;
  severity: Severity;
  subject: string;
  summary: string;
  evidence: Record<string, unknown>;
  fix?: string;
}

/** A plan step as a report shows it (the typed steps a repair runs are src/engine/repair/plan-step.ts). */
export interface ReportStep {
  subject: string;
  action: string;
  detail: string;
  /** Machine-readable parameters the executor needs; never a secret. */
  params?: Record<string, unknown>;
}

export interface Plan {
  id: string;
  steps: ReportStep[];
}

export type StepOutcome = 'verified' | 'skipped' | 'refused' | 'failed';

export interface StepResult {
  subject: string;
  action: string;
  outcome: StepOutcome;
  detail: string;
}

export interface Report {
  kind: ReportKind;
  target: string;
  status: Status;
  /** One line a person reads first: the verdict. */
  verdict: string;
  findings: Finding[];
  plan?: Plan;
  results?: StepResult[];
  startedAt: string;
  durationMs: number;
}

const severityRank: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };

export function statusOf(findings: readonly Finding[]): Status {
  let worst: Severity = 'info';
  for (const f of findings) if (severityRank[f.severity] > severityRank[worst]) worst = f.severity;
  return worst === 'info' ? 'ok' : worst;
}

export function worstStatus(statuses: readonly Status[]): Status {
  const rank: Record<Status, number> = { ok: 0, warning: 1, critical: 2, error: 3 };
  return statuses.reduce<Status>((w, s) => (rank[s] > rank[w] ? s : w), 'ok');
}

export interface ReportDraft {
  kind: ReportKind;
  target: string;
  verdict: string;
  findings: Finding[];
  plan?: Plan;
  results?: StepResult[];
}

/** Stamps a draft with its status and timing. */
export function finishReport(draft: ReportDraft, startedAt: Date, now: Date = new Date()): Report {
  const report: Report = {
    kind: draft.kind,
    target: draft.target,
    status: statusOf(draft.findings),
    verdict: draft.verdict,
    findings: draft.findings,
    startedAt: startedAt.toISOString(),
    durationMs: now.getTime() - startedAt.getTime(),
  };
  if (draft.plan) report.plan = draft.plan;
  if (draft.results) {
    report.results = draft.results;
    report.status = statusAfterRepair(draft.findings, draft.results);
  }
  return report;
}

/**
 * A repair that ran: a failed or refused step is an error. When every step was verified, the
 * critical drift it was planned for is repaired; warnings (a vulnerable controller, the DHCP
 * option-6 trap) and errors (subjects it left alone) still stand.
 */
function statusAfterRepair(findings: readonly Finding[], results: readonly StepResult[]): Status {
  if (results.some((r) => r.outcome === 'failed' || r.outcome === 'refused')) return 'error';
  return statusOf(findings.filter((f) => f.severity !== 'critical'));
}

export function probeFailed(subject: string, reason: string, fix?: string): Finding {
  const finding: Finding = {
    code: 'PROBE_FAILED',
    severity: 'error',
    subject,
    summary: `Could not check ${subject}: ${reason}`,
    evidence: { reason },
  };
  if (fix) finding.fix = fix;
  return finding;
}

/** The exit statuses (docs/configuration.md) for a check or fix report (or several). */
export function exitCodeFor(reports: readonly Report[]): number {
  const worst = worstStatus(reports.map((r) => r.status));
  if (worst === 'error') return 2;
  const isFix = reports.some((r) => r.kind.startsWith('fix-'));
  if (isFix) {
    const pending = reports.some((r) => (r.plan?.steps.length ?? 0) > 0 && !r.results);
    return pending ? 1 : 0;
  }
  return worst === 'ok' ? 0 : 1;
}

/**
 * Reports as the JSON `--json` prints. Evidence keeps some times as Unix seconds (`writtenAt`,
 * `dhcpdSince`: as `stat -c %Y` and `date +%s` print them on the rack); each keeps its number and
 * gains an ISO 8601 twin (`writtenAtIso: "2026-11-30T11:58:26Z"`), like every other time in the report.
 */
export function reportsJson(value: Report | readonly Report[]): string {
  return JSON.stringify(value, withIsoTwins, 2);
}

function withIsoTwins(_key: string, value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const twins = Object.entries(value).flatMap(([k, v]) => {
    const iso = unixSecondsIso(k, v);
    return iso ? [[`${k}Iso`, iso] as const] : [];
  });
  return twins.length ? { ...value, ...Object.fromEntries(twins) } : value;
}

/** A `…At`/`…Since` number of Unix seconds as ISO 8601 UTC; undefined for anything else. */
function unixSecondsIso(key: string, value: unknown): string | undefined {
  return typeof value === 'number' && isTimeKey(key) ? epochMsIso(value * 1000) : undefined;
}

/** Evidence keys that name a point in time (`writtenAt`, `dhcpdSince`). */
export function isTimeKey(key: string): boolean {
  return /(At|Since)$/.test(key);
}

/** Milliseconds since the epoch, if between 2000 and 2200, as ISO 8601 UTC to the second or finer; else undefined. */
export function epochMsIso(ms: number): string | undefined {
  if (!(ms >= Date.UTC(2000, 0, 1) && ms < Date.UTC(2200, 0, 1))) return undefined;
  return new Date(Math.round(ms)).toISOString().replace('.000Z', 'Z');
}
