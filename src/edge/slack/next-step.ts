import type { Finding, Report, Severity } from '../../core/report.ts';
import { findCheck } from '../../features/registry.ts';
import { clauses, clipWords } from './finding-brief.ts';
import { sentences } from './say-less.ts';
import { fixSays, fixWords } from './fix-once.ts';

/**
 * The one next step of an answer: the fix that covers the most, worst first. When a finding's fix
 * names the check's repair (`/maas fix-dns prod`), that command is the step, said first, and every
 * finding it covers (its fix names the command, or is said within the step) is named once; fixes
 * it does not already say are added, each in its first clause. The line (answer-render.ts) says
 * less to stay within its words; the thread holds every fix whole.
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

const MAX_OTHER_WORDS = 16;
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };


export function nextStep(report: Pick<Report, 'kind' | 'target' | 'findings'>): NextStep | undefined {
  const fixed = report.findings
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.fix)
    .sort((a, b) => RANK[b.f.severity] - RANK[a.f.severity] || a.i - b.i)
    .map(({ f }) => f);
  if (!fixed.length) return undefined;
  const repair = findCheck(report.kind)?.fix?.name;
  const command = repair ? `/maas ${repair} ${report.target}` : undefined;
  const covering = command ? fixed.filter((f) => fixWords(f.fix!).includes(command)) : [];
  const primary = covering.length ? primaryFix(covering, command!) : fixed[0]!;
  const saysIt = (f: Finding) => fixSays(primary.fix!, f.fix!);
  const covers = covering.length ? fixed.filter((f) => covering.includes(f) || saysIt(f)) : fixed.filter(saysIt);
  const others = [...new Set(fixed.filter((f) => !covers.includes(f)).map((f) => fixWords(f.fix!)))];
  const also = others.map((t) => clipWords(clauses(t)[0] ?? t, MAX_OTHER_WORDS));
  const first = covering.length ? commandFirst(fixWords(primary.fix!), command!) : fixWords(primary.fix!);
  const text = [first, ...also.map((t) => `Also: ${t}`)].join(' ');
  return { text, covers, ...(covering.length ? { command: command!, repair: repair! } : {}) };
}

/**
 * `Run a forwarder…, then change the subnet…. /maas fix-resolver site-b plans both steps.` reads
 * `/maas fix-resolver site-b plans both steps: run a forwarder…`: the command first, so a line
 * that says less keeps it.
 */
function commandFirst(fix: string, command: string): string {
  const all = sentences(fix);
  const at = all.findIndex((s) => s.includes(command));
  if (at <= 0) return fix;
  const rest = all.filter((_s, i) => i !== at).join('. ');
  return `${all[at]}: ${rest[0]!.toLowerCase()}${rest.slice(1)}.`;
}

/** The worst finding's fix; when that is the bare command, the fullest fix that starts with it. */
function primaryFix(covering: readonly Finding[], command: string): Finding {
  const first = covering[0]!;
  if (fixWords(first.fix!) !== command) return first;
  const fuller = covering.filter((f) => fixWords(f.fix!).startsWith(command) && fixWords(f.fix!) !== command).sort((a, b) => b.fix!.length - a.fix!.length)[0];
  return fuller ?? first;
}
