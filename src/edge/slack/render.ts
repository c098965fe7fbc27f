import type { MrkdwnElement, PlainTextElement } from '@slack/types';
import type { Finding, ReportStep, Report, Severity, Status, StepOutcome, StepResult } from '../../core/report.ts';
import { worstStatus } from '../../core/report.ts';
import { formatDuration } from '../../core/duration.ts';
import { fileNameFor, isDocumentKey, isTableKey, needsFile, TABLE_HEAD_LINES } from './evidence-files.ts';
import { humanLabel, humanValue, macChange, redundantKeys, worthShowing } from './evidence-text.ts';
import { findingCount } from './finding-count.ts';
import { fixesOnce, sharedNote, type FixToSay } from './fix-once.ts';
import { BUDGET_BLOCK_TEXT } from './message-budget.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { clipInside, clipText, codeSpan, escapeMrkdwn, inline as oneLineText, slackDate } from './mrkdwn.ts';

/**
 * Slack's limits on a message (message-limits.ts). `totalText` stays under the undocumented
 * aggregate limit behind `msg_blocks_too_long`, with the budget's margin.
 */
export const SLACK_LIMITS = {
  blocks: SLACK_MESSAGE_LIMITS.blocks,
  sectionText: SLACK_MESSAGE_LIMITS.sectionText,
  headerText: SLACK_MESSAGE_LIMITS.headerText,
  contextText: SLACK_MESSAGE_LIMITS.contextElementText,
  totalText: BUDGET_BLOCK_TEXT,
} as const;

/** The blocks a report renders to: a narrow, typed part of Block Kit (@slack/types). */
export type Block =
  | { type: 'header'; text: PlainTextElement }
  | { type: 'section'; text: MrkdwnElement }
  | { type: 'context'; elements: MrkdwnElement[] }
  | { type: 'divider' };

export interface RenderedMessage {
  /** Fallback text for notifications: starts with the verdict. */
  text: string;
  blocks: Block[];
}

export interface RenderOptions {
  /** Blocks the caller appends afterwards (Approve/Reject buttons), kept free of the 50. */
  reserveBlocks?: number;
  /** Block text the caller appends afterwards (a status line), kept free of the aggregate budget. */
  reserveChars?: number;
}

const STATUS_WORD: Record<Status, string> = { ok: 'OK', warning: 'WARNING', critical: 'CRITICAL', error: 'ERROR' };
const STATUS_ICON: Record<Status, string> = {
  ok: ':white_check_mark:',
  warning: ':warning:',
  critical: ':red_circle:',
  error: ':x:',
};
const SEVERITY_ICON: Record<Severity, string> = {
  info: ':information_source:',
  warning: ':warning:',
  critical: ':red_circle:',
  error: ':x:',
};
const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };
const OUTCOME_ICON: Record<StepOutcome, string> = {
  verified: ':white_check_mark:',
  skipped: ':fast_forward:',
  refused: ':no_entry:',
  failed: ':x:',
};

/** Per-piece caps: a finding stays readable and leaves room for the others. */
const CAP = { overflowSubjects: 600, subject: 200, summary: 600, fix: 600, evidence: 900, evidenceValue: 240, arrayItems: 8, line: 500, fallback: 3000 };
/** Sections a plan or a results list may take, so findings keep some room. */
const MAX_LIST_SECTIONS = 3;

export function statusWord(status: Status): string {
  return STATUS_WORD[status];
}

/** One report as a Slack message. */
export function renderReport(report: Report, options: RenderOptions = {}): RenderedMessage {
  return renderReports([report], options);
}

/** One or several reports (a target of `all`) as one Slack message within Slack's limits. */
export function renderReports(reports: readonly Report[], options: RenderOptions = {}): RenderedMessage {
  const maxBlocks = Math.max(3, SLACK_LIMITS.blocks - (options.reserveBlocks ?? 0));
  const text = fallbackText(reports);
  if (reports.length === 0) return { text, blocks: [section(text)] };
  const [only] = reports;
  if (reports.length === 1 && only && isPlainHealthy(only)) return { text, blocks: healthyBlocks(only) };
  const maxChars = SLACK_LIMITS.totalText - (options.reserveChars ?? 0);
  const full = renderFull(reports, maxBlocks, maxChars);
  return { text, blocks: full ?? renderCompact(reports, maxBlocks, maxChars) };
}

/** Healthy, with nothing to take away (no table, no snippet to paste): two lines are enough. */
function isPlainHealthy(report: Report): boolean {
  if (report.status !== 'ok' || report.plan || report.results) return false;
  return !report.findings.some((f) => Object.values(f.evidence).some((v) => typeof v === 'string' && v.includes('\n')));
}

/** A healthy answer is two lines: the verdict, and when it was measured. */
function healthyBlocks(report: Report): Block[] {
  return [section(`${STATUS_ICON.ok} *OK* · ${oneLineText(report.kind)} ${oneLineText(report.target)}: ${oneLineText(report.verdict)}`), contextBlock([report])];
}

function fallbackText(reports: readonly Report[]): string {
  if (reports.length === 0) return 'OK: nothing to report';
  if (reports.length === 1) {
    const [only] = reports as [Report];
    return clipText(`${STATUS_WORD[only.status]}: ${oneLineText(only.verdict)}`, CAP.fallback);
  }
  const worst = worstStatus(reports.map((r) => r.status));
  const parts = reports.map((r) => `${oneLineText(r.target)} ${STATUS_WORD[r.status]}: ${oneLineText(r.verdict)}`);
  return clipText(`${STATUS_WORD[worst]}: ${problemCount(reports)} · ${parts.join(' · ')}`, CAP.fallback);
}

function problemCount(reports: readonly Report[]): string {
  const bad = reports.filter((r) => r.status !== 'ok').length;
  return bad === 0 ? `all ${reports.length} targets healthy` : `${bad} of ${reports.length} targets need attention`;
}

interface Budget {
  blocks: number;
  chars: number;
}

/** Every report with its own sections; undefined when even the skeleton does not fit. */
function renderFull(reports: readonly Report[], maxBlocks: number, maxChars: number): Block[] | undefined {
  const single = reports.length === 1;
  const head = headerBlock(reports);
  const foot = contextBlock(reports);
  const budget: Budget = { blocks: maxBlocks - 2, chars: maxChars - blockChars(head) - blockChars(foot) };
  const listSections = single ? MAX_LIST_SECTIONS : 1;

  const skeletons = reports.map((report) => {
    const title = section(single ? `*${oneLineText(report.verdict)}*` : reportTitle(report));
    const plan = report.plan ? listSectionsFor(planLines(report.plan.id, report.plan.steps), listSections) : [];
    const results = report.results ? listSectionsFor(resultLines(report.results), listSections) : [];
    return { report, title, plan, results };
  });
  for (const s of skeletons) spend(budget, [s.title, ...s.plan, ...s.results]);
  if (budget.blocks < 0 || budget.chars < 0) return undefined;

  const ordered = skeletons.map((s) => cappedPerCode(sortedFindings(s.report.findings)));
  const counted = ordered.filter((o) => o.findings.length > 0).map((o) => overflowBlock(o.findings));
  if (counted.length > budget.blocks || counted.reduce((n, b) => n + blockChars(b), 0) > budget.chars) return undefined;
  const findings = allocateFindings(
    ordered.map((o) => o.findings),
    budget,
    ordered.map((o) => o.shown),
    reports.map((r) => r.target),
  );
  const blocks: Block[] = [head];
  skeletons.forEach((s, i) => {
    blocks.push(s.title, ...(findings[i] ?? []), ...s.plan, ...s.results);
  });
  blocks.push(foot);
  return blocks;
}

/** Many targets: one line per report, packed into sections. */
function renderCompact(reports: readonly Report[], maxBlocks: number, maxChars: number): Block[] {
  const lines = reports.map((r) => {
    const codes = r.findings.length ? ` · ${codeCounts(r.findings.filter((f) => f.severity !== 'info'), 5)}` : '';
    return clipText(`${STATUS_ICON[r.status]} ${reportTitle(r)}${codes}`, CAP.line);
  });
  const head = headerBlock(reports);
  const foot = contextBlock(reports);
  const room = Math.min(maxBlocks - 2, Math.floor((maxChars - blockChars(head) - blockChars(foot)) / SLACK_LIMITS.sectionText));
  return [head, ...listSectionsFor(lines, Math.max(1, room), 'more targets'), foot];
}

function reportTitle(report: Report): string {
  return `*${oneLineText(report.target)}* (${oneLineText(report.kind)}) ${STATUS_WORD[report.status]}: ${oneLineText(report.verdict)}`;
}

function headerBlock(reports: readonly Report[]): Block {
  const worst = worstStatus(reports.map((r) => r.status));
  const kinds = [...new Set(reports.map((r) => r.kind))];
  const what =
    reports.length === 1
      ? `${reports[0]?.kind} ${reports[0]?.target}`
      : `${kinds.length === 1 ? kinds[0] : 'checks'} · ${reports.length} targets`;
  const text = clipText(`${STATUS_ICON[worst]} ${STATUS_WORD[worst]} · ${what}`, SLACK_LIMITS.headerText);
  return { type: 'header', text: { type: 'plain_text', text, emoji: true } };
}

function contextBlock(reports: readonly Report[]): Block {
  const first = reports[0];
  const findings = reports.flatMap((r) => r.findings);
  const took = reports.reduce((ms, r) => Math.max(ms, r.durationMs), 0);
  const started = first ? Date.parse(first.startedAt) : Number.NaN;
  const when = Number.isFinite(started) ? slackDate(started) : escapeMrkdwn(first?.startedAt ?? '');
  const steps = reports.reduce((n, r) => n + (r.results?.length ?? 0), 0);
  const counted = findings.length === 0 && steps > 0 ? `${steps} step${steps === 1 ? '' : 's'} run` : findingCount(findings);
  const text = `${counted} · started ${when} · took ${took < 1000 ? `${took} ms` : formatDuration(took)}`;
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clipText(text, SLACK_LIMITS.contextText) }] };
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text: clipText(text, SLACK_LIMITS.sectionText) } };
}

function blockChars(block: Block): number {
  if (block.type === 'divider') return 0;
  if (block.type === 'context') return block.elements.reduce((n, e) => n + e.text.length, 0);
  return block.text.text.length;
}

function spend(budget: Budget, blocks: readonly Block[]): void {
  budget.blocks -= blocks.length;
  budget.chars -= blocks.reduce((n, b) => n + blockChars(b), 0);
}

/** Findings of one code beyond this many are counted, not shown: twelve MAC_DRIFT rows belong in the table. */
const MAX_SHOWN_PER_CODE = 3;

/** Keeps the order, moves each code's findings past MAX_SHOWN_PER_CODE to the end; `shown` is how many may be shown. */
function cappedPerCode(findings: readonly Finding[]): { findings: Finding[]; shown: number } {
  const seen = new Map<string, number>();
  const head: Finding[] = [];
  const tail: Finding[] = [];
  for (const f of findings) {
    const n = (seen.get(f.code) ?? 0) + 1;
    seen.set(f.code, n);
    (n <= MAX_SHOWN_PER_CODE ? head : tail).push(f);
  }
  return { findings: [...head, ...tail], shown: head.length };
}

function sortedFindings(findings: readonly Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_RANK[b.f.severity] - SEVERITY_RANK[a.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}

/**
 * Shows findings worst first, taking turns between reports, while blocks and characters last;
 * each report whose findings do not all fit ends with one section counting the rest by code.
 */
function allocateFindings(perReport: Finding[][], budget: Budget, limits: readonly number[], targets: readonly string[]): Block[][] {
  const shown: Block[][] = perReport.map(() => []);
  const fixes = perReport.map(fixesOnce);
  const overflowCost = (i: number) => {
    const rest = perReport[i]!.slice(shown[i]!.length);
    return rest.length ? blockChars(overflowBlock(rest)) : 0;
  };
  const overflowBlocks = () => perReport.filter((fs, i) => shown[i]!.length < fs.length).length;
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (let i = 0; i < perReport.length; i += 1) {
      const next = perReport[i]![shown[i]!.length];
      if (!next || shown[i]!.length >= (limits[i] ?? Infinity)) continue;
      const block = findingBlock(next, targets[i] ?? '', fixes[i]![shown[i]!.length]);
      shown[i]!.push(block);
      const used = shown.reduce((n, bs) => n + bs.length, 0) + overflowBlocks();
      const chars =
        shown.reduce((n, bs) => n + bs.reduce((m, b) => m + blockChars(b), 0), 0) +
        perReport.reduce((n, _fs, j) => n + overflowCost(j), 0);
      if (used > budget.blocks || chars > budget.chars) {
        shown[i]!.pop();
        continue;
      }
      progressed = true;
    }
  }
  return shown.map((blocks, i) => {
    const rest = perReport[i]!.slice(blocks.length);
    return rest.length ? [...blocks, overflowBlock(rest)] : blocks;
  });
}

function findingBlock(f: Finding, target: string, fix: FixToSay | undefined): Block {
  const first = `${SEVERITY_ICON[f.severity]} ${codeSpan(f.code, 80)} *${f.severity}* — ${clipText(oneLineText(f.subject), CAP.subject)}`;
  const summary = clipText(oneLineText(f.summary), CAP.summary);
  const lines = [first, summary];
  const { inline, preformatted } = splitEvidence(f.evidence);
  const evidence = evidenceLine(inline, redundantKeys(f.evidence, summary));
  if (evidence) lines.push(evidence);
  if (fix) {
    const shared = sharedNote(fix);
    lines.push(clipInside('*Fix:* ', oneLineText(fix.fix), shared ? ` _(${shared})_` : '', CAP.fix));
  }
  lines.push(...preformattedBlocks(preformatted, SLACK_LIMITS.sectionText - lines.join('\n').length - 1, target, f.evidence));
  return section(lines.join('\n'));
}

/** Multi-line text evidence (a table, a config snippet) is shown as it was laid out, not squashed into one line. */
function splitEvidence(evidence: Record<string, unknown>): { inline: Record<string, unknown>; preformatted: [string, string][] } {
  const inline: Record<string, unknown> = {};
  const preformatted: [string, string][] = [];
  for (const [key, value] of Object.entries(evidence)) {
    if (typeof value === 'string' && value.includes('\n')) preformatted.push([key, value]);
    else inline[key] = value;
  }
  return { inline, preformatted };
}

/** Code blocks cut at whole lines within `room` characters, with a count of the lines left out. */
function preformattedBlocks(entries: [string, string][], room: number, target: string, evidence: Record<string, unknown>): string[] {
  const out: string[] = [];
  let left = room;
  for (const [index, [key, text]] of entries.entries()) {
    if (needsFile(text) || isDocumentKey(key)) {
      const block = fileNote(key, text, target, evidence);
      out.push(block);
      left -= block.length + 1;
      continue;
    }
    const share = Math.floor(left / (entries.length - index));
    const head = `_${escapeMrkdwn(humanLabel(key))}:_\n\`\`\`\n`;
    const tailRoom = 40;
    const lines = escapeMrkdwn(text.replace(/```/g, "'''")).split('\n');
    const kept: string[] = [];
    let used = head.length + 4 + tailRoom;
    for (const line of lines) {
      if (used + line.length + 1 > share) break;
      kept.push(line);
      used += line.length + 1;
    }
    if (!kept.length) continue;
    const omitted = lines.length - kept.length;
    const block = `${head}${kept.join('\n')}${omitted ? `\n… ${omitted} more line${omitted === 1 ? '' : 's'}` : ''}\n\`\`\``;
    out.push(block);
    left -= block.length + 1;
  }
  return out;
}

/** `key` value pairs in words (evidence-text.ts), long values summarised, keys that do not fit counted. */
function evidenceLine(evidence: Record<string, unknown>, skip: Set<string>): string {
  const change = macChange(evidence);
  if (change) skip.add('recorded').add('live');
  const entries: [string, string][] = Object.entries(evidence)
    .filter(([k, v]) => !skip.has(k) && worthShowing(k, v))
    .map(([k, v]) => [k, humanValue(k, v, CAP.evidenceValue - 2)]);
  if (change) entries.unshift(['MAC', change]);
  if (!entries.length) return '';
  const prefix = '_evidence:_ ';
  const parts: string[] = [];
  let length = prefix.length;
  for (const [index, [key, value]] of entries.entries()) {
    const part = `${escapeMrkdwn(key === 'MAC' ? key : humanLabel(key))} ${codeSpan(value, CAP.evidenceValue)}`;
    const left = entries.length - index - 1;
    const tail = left ? ` (+${left} more)`.length : 0;
    if (length + part.length + 3 + tail > CAP.evidence) {
      parts.push(`(+${entries.length - index} more)`);
      break;
    }
    parts.push(part);
    length += part.length + 3;
  }
  return prefix + parts.join(' · ');
}

/** A text too long for a message: a table shows its head; either way the note names the file in the thread and its rows. */
function fileNote(key: string, text: string, target: string, evidence: Record<string, unknown>): string {
  const filename = fileNameFor(target, key);
  const rows = Array.isArray(evidence.table) && isTableKey(key) ? evidence.table.length : text.split('\n').length - (isTableKey(key) ? 1 : 0);
  const label = `_${escapeMrkdwn(humanLabel(key))}:_`;
  const noun = isTableKey(key) ? `${rows} row${rows === 1 ? '' : 's'}` : `${rows} line${rows === 1 ? '' : 's'}`;
  const note = `the whole of it (${noun}) is in the file ${codeSpan(filename, 90)} in the thread`;
  if (!isTableKey(key)) return `${label} ${note}`;
  const head = escapeMrkdwn(text.replace(/```/g, "'''")).split('\n').slice(0, TABLE_HEAD_LINES + 1);
  return clipInside(`${label}\n\`\`\`\n`, head.map((l) => clipText(l, 110)).join('\n'), `\n\`\`\`\n… ${note}`, 1900);
}

function overflowBlock(rest: readonly Finding[]): Block {
  const head = `…and ${rest.length} more finding${rest.length === 1 ? '' : 's'}: ${codeCounts(rest, 20)}`;
  return section(`${head}${subjectList(rest, CAP.overflowSubjects)}`);
}

/** ` on a, b, c, … +N more`: which machines or records the counted findings are about. */
function subjectList(findings: readonly Finding[], max: number): string {
  const subjects = [...new Set(findings.map((f) => oneLineText(f.subject)))];
  const shown: string[] = [];
  let used = 0;
  for (const subject of subjects) {
    if (used + subject.length + 2 > max) break;
    shown.push(subject);
    used += subject.length + 2;
  }
  if (!shown.length) return '';
  const more = subjects.length - shown.length;
  return ` on ${shown.join(', ')}${more ? `, … +${more} more` : ''}`;
}

/** `MAC_DRIFT` ×30, `MAC_NOT_VIRSH` ×7, most frequent first. */
function codeCounts(findings: readonly Finding[], maxCodes: number): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, maxCodes).map(([code, n]) => `${codeSpan(code, 80)} ×${n}`);
  if (sorted.length > maxCodes) shown.push(`${sorted.length - maxCodes} other codes`);
  return shown.join(', ');
}

function planLines(id: string, steps: readonly ReportStep[]): string[] {
  const head = `*Plan* ${codeSpan(id, 80)}: ${steps.length} step${steps.length === 1 ? '' : 's'}`;
  return [head, ...steps.map((s, i) => stepLine(`${i + 1}.`, s.action, s.subject, s.detail))];
}

function resultLines(results: readonly StepResult[]): string[] {
  const counts = new Map<StepOutcome, number>();
  for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const summary = [...counts].map(([outcome, n]) => `${n} ${outcome}`).join(', ');
  return [`*Results*: ${summary || 'no steps ran'}`, ...results.map((r) => stepLine(`${OUTCOME_ICON[r.outcome]} ${r.outcome}`, r.action, r.subject, r.detail))];
}

function stepLine(marker: string, action: string, subject: string, detail: string): string {
  return clipText(`${marker} *${oneLineText(action)}* ${oneLineText(subject)} — ${oneLineText(detail)}`, CAP.line);
}

/** Packs lines into at most `maxSections` sections; lines that do not fit are counted in the last one. */
function listSectionsFor(lines: readonly string[], maxSections: number, noun = 'more'): Block[] {
  const limit = SLACK_LIMITS.sectionText;
  const sections: string[][] = [];
  let current: string[] = [];
  let placed = 0;
  for (const line of lines) {
    if (current.length && joinedLength([...current, line]) > limit) {
      if (sections.length + 1 >= maxSections) break;
      sections.push(current);
      current = [];
    }
    current.push(line);
    placed += 1;
  }
  if (placed < lines.length) {
    let hidden = lines.length - placed;
    while (current.length > 1 && joinedLength([...current, `…and ${hidden} ${noun}`]) > limit) {
      current.pop();
      hidden += 1;
    }
    current.push(`…and ${hidden} ${noun}`);
  }
  if (current.length) sections.push(current);
  return sections.map((s) => section(s.join('\n')));
}

function joinedLength(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + l.length, 0) + Math.max(0, lines.length - 1);
}
