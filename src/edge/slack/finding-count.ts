import type { Finding } from '../../core/report.ts';

/**
 * How many findings a message shows, counted as it shows them: problems are findings, and the
 * info findings (notes such as "the resolver answers") are said apart, since the message lists only
 * problems. A healthy result with two notes is "no findings · 2 notes", never "2 findings".
 */
export function findingCount(findings: readonly Finding[]): string {
  const notes = findings.filter((f) => f.severity === 'info').length;
  const problems = findings.length - notes;
  const counted = problems ? `${problems} finding${problems === 1 ? '' : 's'}` : 'no findings';
  return notes ? `${counted} · ${notes} note${notes === 1 ? '' : 's'}` : counted;
}
