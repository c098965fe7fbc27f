import type { Finding, Report, Severity } from '../../core/report.ts';
import { findCheck } from '../../features/registry.ts';
import { clauses, clipWords } from './finding-brief.ts';

/**
 * The one next step of an answer: the fix that covers the most, worst first. When a finding's fix
 * names the check's repair (`/maas fix-dns prod`), that command is the step and every finding it
 * covers is named once; fixes it does not already say are added, each in its first clause.
 */
export interface NextStep {
  /** Plain text, not escaped. */
  text: string;
  /** `/maas fix-… <target>` when the step is the check's repair. */
  command?: string;
  /** The repair's name (`fix-dns`) when the step is it: what the Plan button runs. */
  repair?: string;
  /** The findings the step covers. */
  covers: Finding[];
}

const MAX_STEP_WORDS = 45;
const MAX_OTHER_WORDS = 16;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };

const bare = (text: string) => text.replace(/`/g, '').replace(/\s+/g, ' ').trim();

export function nextStep(report: Pick<Report, 'kind' | 'target' | 'findings'>): NextStep | undefined {
  const fixed = report.findings
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.fix)
    .sort((a, b) => RANK[b.f.severity] - RANK[a.f.severity] || a.i - b.i)
    .map(({ f }) => f);
  if (!fixed.length) return undefined;
  const repair = findCheck(report.kind)?.fix?.name;
  const command = repair ? `/maas ${repair} ${report.target}` : undefined;
  const covering = command ? fixed.filter((f) => bare(f.fix!).includes(command)) : [];
  const primary = covering.length ? primaryFix(covering, command!) : fixed[0]!;
  const covers = covering.length ? covering : fixed.filter((f) => bare(f.fix!) === bare(primary.fix!));
  const said = bare(primary.fix!).toLowerCase();
  const others = [...new Set(fixed.filter((f) => !covers.includes(f)).map((f) => bare(f.fix!)))].filter((t) => !said.includes(t.toLowerCase()));
  const also = others.map((t) => clipWords(clauses(t)[0] ?? t, MAX_OTHER_WORDS));
  const text = [clipWords(bare(primary.fix!), MAX_STEP_WORDS), ...also.map((t) => `Also: ${t}`)].join(' ');
  return { text, covers, ...(covering.length ? { command: command!, repair: repair! } : {}) };
}

/** The worst finding's fix; when that is the bare command, the fullest fix that starts with it. */
function primaryFix(covering: readonly Finding[], command: string): Finding {
  const first = covering[0]!;
  if (bare(first.fix!) !== command) return first;
  const fuller = covering.filter((f) => bare(f.fix!).startsWith(command) && bare(f.fix!) !== command).sort((a, b) => b.fix!.length - a.fix!.length)[0];
  return fuller ?? first;
}
