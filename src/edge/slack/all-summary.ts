import type { Finding, Report, Severity, Status } from '../../core/report.ts';
import { worstStatus } from '../../core/report.ts';
import type { FileAttachment } from './evidence-files.ts';
import { findingCount } from './finding-count.ts';
import { nextStepLine } from './answer-render.ts';
import { nextStep } from './next-step.ts';
import { BUDGET_BLOCK_TEXT } from './message-budget.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { clipText, codeSpan, escapeMrkdwn, inline } from './mrkdwn.ts';
import type { Block, RenderedMessage } from './render.ts';

/**
 * `all` at incident scale: one summary message, a compact table of target, verdict and worst
 * finding; each failing target's details follow in the thread. When the table does not fit,
 * the summary shows the worst rows and the whole table goes to a file in the thread.
 */

const ICON: Record<Status, string> = { ok: ':white_check_mark:', warning: ':warning:', critical: ':red_circle:', error: ':x:' };
const WORD: Record<Status, string> = { ok: 'OK', warning: 'WARNING', critical: 'CRITICAL', error: 'ERROR' };
const RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2, error: 3 };
const LINE_MAX = 260;
/** Blocks and characters the rows may take, leaving room for header, intro and footer. */
const ROW_SECTIONS = 40;
const HEALTHY_MAX = 1500;

export interface SummaryMessage {
  message: RenderedMessage;
  /** The whole table, when the message could not hold every row. */
  file?: FileAttachment;
}

/** Worst first, then by name: the order of the table and of the thread. */
export function summaryOrder(reports: readonly Report[]): Report[] {
  const rank: Record<Status, number> = { error: 3, critical: 2, warning: 1, ok: 0 };
  return [...reports].sort((a, b) => rank[b.status] - rank[a.status] || a.target.localeCompare(b.target));
}

export function renderSummary(reports: readonly Report[]): SummaryMessage {
  const ordered = summaryOrder(reports);
  const failing = ordered.filter((r) => r.status !== 'ok');
  const healthy = ordered.filter((r) => r.status === 'ok');
  const worst = worstStatus(reports.map((r) => r.status));
  const kinds = [...new Set(reports.map((r) => r.kind))];
  const kind = kinds.length === 1 ? kinds[0]! : 'checks';
  const text = clipText(
    `${WORD[worst]}: ${failing.length ? `${failing.length} of ${reports.length} targets need attention` : `all ${reports.length} targets healthy`} (${kind} all)`,
    3000,
  );
  const header: Block = { type: 'header', text: { type: 'plain_text', text: clipText(`${ICON[worst]} ${WORD[worst]} · ${kind} all · ${reports.length} targets`, SLACK_MESSAGE_LIMITS.headerText), emoji: true } };
  const intro = failing.length
    ? `*${failing.length} of ${reports.length} targets need attention*; the details of each follow in the thread, worst first.`
    : `*All ${reports.length} targets are healthy.*`;
  const rows = failing.map(rowLine);
  const healthyLine = healthy.length ? `${ICON.ok} healthy (${healthy.length}): ${healthy.map((r) => escapeMrkdwn(r.target)).join(', ')}` : '';
  const footer = contextLine(reports);
  const step = allNextStep(failing);

  // Room for the rows once everything else is in: the healthy line (at most HEALTHY_MAX), the next step and the line naming the file.
  const room = BUDGET_BLOCK_TEXT - blockChars(header) - intro.length - footer.length - step.length - Math.min(healthyLine.length, HEALTHY_MAX) - 400;
  const { sections, shown } = packRows(rows, Math.min(room, ROW_SECTIONS * SLACK_MESSAGE_LIMITS.sectionText), ROW_SECTIONS);
  const left = rows.length - shown;
  const blocks: Block[] = [header, section(intro), ...sections.map(section)];
  const healthyCut = healthyLine.length > HEALTHY_MAX;
  const file = left > 0 || healthyCut ? tableFile(ordered, kind) : undefined;
  if (file && left > 0) {
    blocks.push(section(`…and ${left} more target${left === 1 ? '' : 's'} needing attention: the whole table (${file.rows} rows) is in the file ${codeSpan(file.filename, 80)} in the thread.`));
  }
  if (healthyLine) blocks.push(section(healthyCut && file ? `${clipText(healthyLine, HEALTHY_MAX - 120)} (all ${file.rows} in ${codeSpan(file.filename, 80)})` : healthyLine));
  if (step) blocks.push(section(step));
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: footer }] });
  return { message: { text, blocks }, ...(file ? { file } : {}) };
}

const STEPS_NAMED = 3;

/**
 * One *Next step* for every failing target: the repairs that fix them, worst first
 * (`/maas fix-resolver site-b`, …), or, when none has a repair, the worst one's own step.
 */
function allNextStep(failing: readonly Report[]): string {
  const steps = failing.map((r) => nextStep(r)).filter((s) => s !== undefined);
  const commands = [...new Set(steps.flatMap((s) => (s.command ? [s.command] : [])))];
  if (!commands.length) return steps[0] ? nextStepLine(steps[0]) : '';
  const named = commands.slice(0, STEPS_NAMED).map((c) => codeSpan(c, 80));
  const more = commands.length > named.length ? `, and ${commands.length - named.length} more in the thread` : '';
  return `*Next step:* ${named.join(', ')}${more}`;
}

function rowLine(report: Report): string {
  const worst = worstFinding(report.findings);
  const count = worst ? report.findings.filter((f) => f.code === worst.code).length : 0;
  const what = worst ? ` · ${codeSpan(worst.code, 60)}${count > 1 ? ` ×${count}` : ''}` : '';
  return clipText(`${ICON[report.status]} *${clipText(inline(report.target), 80)}* ${WORD[report.status]}${what} — ${inline(report.verdict)}`, LINE_MAX);
}

function worstFinding(findings: readonly Finding[]): Finding | undefined {
  let worst: Finding | undefined;
  for (const f of findings) if (f.severity !== 'info' && (!worst || RANK[f.severity] > RANK[worst.severity])) worst = f;
  return worst;
}

/** Rows into sections of at most 3000 characters, up to `maxChars` and `maxSections`. */
function packRows(rows: readonly string[], maxChars: number, maxSections: number): { sections: string[]; shown: number } {
  const sections: string[] = [];
  let current = '';
  let used = 0;
  let shown = 0;
  for (const row of rows) {
    const cost = row.length + 1;
    if (used + cost > maxChars) break;
    if (current && current.length + cost > SLACK_MESSAGE_LIMITS.sectionText) {
      if (sections.length + 1 >= maxSections) break;
      sections.push(current);
      current = '';
    }
    current = current ? `${current}\n${row}` : row;
    used += cost;
    shown += 1;
  }
  if (current) sections.push(current);
  return { sections, shown };
}

/** Every target as a plain-text table: the file behind a summary too long for one message. */
function tableFile(ordered: readonly Report[], kind: string): FileAttachment {
  const cells = ordered.map((r) => {
    const worst = worstFinding(r.findings);
    return [r.target, WORD[r.status], worst ? worst.code : '', r.verdict.replace(/\s+/g, ' ')];
  });
  const header = ['TARGET', 'STATUS', 'WORST FINDING', 'VERDICT'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return { filename: `${kind}-all.txt`, title: `${kind} all: the whole table, ${ordered.length} targets`, content: [line(header), ...cells.map(line)].join('\n') + '\n', rows: ordered.length };
}

function contextLine(reports: readonly Report[]): string {
  const took = reports.reduce((ms, r) => Math.max(ms, r.durationMs), 0);
  return clipText(`${findingCount(reports.flatMap((r) => r.findings))} across ${reports.length} targets · took ${took} ms`, SLACK_MESSAGE_LIMITS.contextElementText);
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text: clipText(text, SLACK_MESSAGE_LIMITS.sectionText) } };
}

function blockChars(block: Block): number {
  return block.type === 'header' || block.type === 'section' ? block.text.text.length : 0;
}
