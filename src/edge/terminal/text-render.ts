import type { Finding, Report } from '../../core/report.ts';
import { oneLine } from '../../core/one-line.ts';

const STATUS_WORD: Record<Report['status'], string> = {
  ok: 'OK',
  warning: 'WARNING',
  critical: 'CRITICAL',
  error: 'ERROR',
};

function evidenceLines(evidence: Record<string, unknown>): string[] {
  return Object.entries(evidence).map(([k, v]) => {
    if (typeof v === 'string') return `      ${k}: ${v.includes('\n') ? `\n${indent(v, 8)}` : v}`;
    return `      ${k}: ${JSON.stringify(v)}`;
  });
}

function indent(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');
}

function findingText(f: Finding): string[] {
  const lines = [`  [${f.severity}] ${f.code}  ${oneLine(f.subject)}`, `      ${oneLine(f.summary)}`];
  lines.push(...evidenceLines(f.evidence));
  if (f.fix) lines.push(`      next: ${f.fix}`);
  return lines;
}

/** A report as a person reads it in a terminal: verdict first, then evidence, then next steps. */
export function reportText(report: Report): string {
  const lines = [`${STATUS_WORD[report.status]} ${report.kind} ${oneLine(report.target)}: ${oneLine(report.verdict)}`];
  for (const f of report.findings) lines.push(...findingText(f));
  if (report.plan) {
    lines.push(`  plan ${report.plan.id}: ${report.plan.steps.length} step(s)`);
    report.plan.steps.forEach((s, i) => lines.push(`    ${i + 1}. ${oneLine(s.subject)}: ${s.action} — ${oneLine(s.detail)}`));
  }
  if (report.results) {
    lines.push('  results:');
    for (const r of report.results) lines.push(`    ${r.outcome.padEnd(8)} ${oneLine(r.subject)}: ${r.action} — ${oneLine(r.detail)}`);
  }
  lines.push(`  (${report.durationMs} ms, started ${report.startedAt})`);
  return lines.join('\n');
}

export function reportsText(reports: readonly Report[]): string {
  return reports.map(reportText).join('\n\n');
}
