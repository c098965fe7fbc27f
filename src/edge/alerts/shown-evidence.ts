import type { Report } from '../../core/report.ts';
import { evidenceDigest } from './fingerprint.ts';

/** What an answer's thread shows: the verdict, and each finding (`CODE subject`) with its evidence's digest. */
export interface ShownEvidence {
  verdict: string;
  findings: Record<string, string>;
}

/** Findings named `CODE subject`, as the thread's reader sees them. */
export interface EvidenceChange {
  added: string[];
  changed: string[];
  gone: string[];
}

export function shownEvidenceOf(report: Report): ShownEvidence {
  const findings: Record<string, string> = {};
  for (const f of report.findings) findings[`${f.code} ${f.subject}`] = evidenceDigest({ summary: f.summary, severity: f.severity, evidence: f.evidence, fix: f.fix });
  return { verdict: report.verdict, findings };
}

/** What differs between the evidence shown and the new; undefined when nothing a reader would see did. */
export function evidenceChange(before: ShownEvidence, now: ShownEvidence): EvidenceChange | undefined {
  const added = Object.keys(now.findings).filter((k) => !(k in before.findings));
  const gone = Object.keys(before.findings).filter((k) => !(k in now.findings));
  const changed = Object.keys(now.findings).filter((k) => k in before.findings && before.findings[k] !== now.findings[k]);
  if (!added.length && !gone.length && !changed.length && before.verdict === now.verdict) return undefined;
  return { added, changed, gone };
}
