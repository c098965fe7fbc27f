import type { KnownBlock } from '@slack/types';
import type { Finding, Report, ReportStep, StepResult } from '../../core/report.ts';
import { oneLine } from '../../core/one-line.ts';
import { SEVERITY_ICON, verdictInFull } from './answer-render.ts';
import { attachmentsFor, fileNameFor, isTableKey, needsFile, TABLE_HEAD_LINES, type FileAttachment } from './evidence-files.ts';
import { fixesOnce, sharedNote, type FixToSay } from './fix-once.ts';
import { humanLabel, humanValue, macChange, option6Handed, redundantKeys, subjectText, worthShowing } from './evidence-text.ts';
import { SLACK_MESSAGE_LIMITS } from './message-limits.ts';
import { codeSpan, escapeMrkdwn } from './mrkdwn.ts';
import { withDateTokens, withIsoTimes } from './slack-dates.ts';

/**
 * The thread under an answer: every finding whole (its sentence, its evidence as labelled lines,
 * its fix once), tables and snippets as laid out, a plan's steps and a run's results whole. When
 * that is more than MAX_MESSAGES messages, the thread shows the worst findings and the whole of it
 * goes in a file (ISO 8601 times); tables and snippets too long for a message are files as before.
 */

export interface EvidenceThread {
  messages: { text: string; blocks: KnownBlock[] }[];
  files: FileAttachment[];
}

const MAX_MESSAGES = 2;
const FEW_PER_CODE = 3;
const SECTION_MAX = SLACK_MESSAGE_LIMITS.sectionText - 100;
const MESSAGE_BLOCKS = 40;
const MESSAGE_CHARS = 10_000;
/** A value is shown whole up to this many characters: beyond it, it is in the evidence file. */
const VALUE_MAX = 1500;

interface Style {
  /** Longest value shown: the thread cuts, the file keeps all. */
  valueMax: number;
  text(s: string): string;
  bold(s: string): string;
  italic(s: string): string;
  code(s: string): string;
  pre(s: string): string;
  severity(f: Finding): string;
}

const MRKDWN: Style = {
  valueMax: VALUE_MAX,
  text: (s) => withDateTokens(escapeMrkdwn(oneLine(s))),
  bold: (s) => `*${s}*`,
  italic: (s) => `_${s}_`,
  code: (s) => codeSpan(s, 200),
  pre: (s) => `\`\`\`\n${escapeMrkdwn(s.replace(/```/g, "'''")).replace(/\n$/, '')}\n\`\`\``,
  severity: (f) => `${SEVERITY_ICON[f.severity]} ${codeSpan(f.code, 60)} *${f.severity}*`,
};

const PLAIN: Style = {
  valueMax: Number.MAX_SAFE_INTEGER,
  text: (s) => withIsoTimes(oneLine(s)),
  bold: (s) => s,
  italic: (s) => s,
  code: (s) => s,
  pre: (s) => s.replace(/\n$/, '').split('\n').map((l) => `    ${l}`).join('\n'),
  severity: (f) => `[${f.severity}] ${f.code}`,
};

export function renderEvidence(report: Report): EvidenceThread {
  const files = attachmentsFor(report);
  const verdict = verdictChunk(report);
  const chunks = [...verdict, ...evidenceChunks(report, MRKDWN)];
  const messages = pack(report, chunks);
  if (messages.length <= MAX_MESSAGES && !cutsValues(report)) return { messages, files };
  const file = evidenceFile(report);
  const n = report.findings.length;
  const whose = n === 1 ? 'the finding' : `all ${n} findings`;
  const note = `The evidence of ${whose}${report.plan ? ' and every step' : ''}, whole, is in the file ${codeSpan(file.filename, 90)} in this thread.`;
  const first = pack(report, [[note], ...verdict, ...evidenceChunks({ ...report, findings: fewPerCode(report.findings) }, MRKDWN)])[0]!;
  return { messages: [first], files: [...files, file] };
}

/** The verdict whole, when the message's first line says less of it. */
function verdictChunk(report: Report): string[][] {
  const whole = verdictInFull(report);
  return whole ? [[`${MRKDWN.bold('The verdict in full:')} ${MRKDWN.text(whole)}`]] : [];
}

/** The first few findings of each code: the thread's sample when the whole is in a file. */
function fewPerCode(findings: readonly Finding[]): Finding[] {
  const seen = new Map<string, number>();
  return findings.filter((f) => {
    const n = (seen.get(f.code) ?? 0) + 1;
    seen.set(f.code, n);
    return n <= FEW_PER_CODE;
  });
}

/** Whether a value the thread shows is longer than it shows (then the file holds it whole); a table shown as its text is not cut. */
function cutsValues(report: Report): boolean {
  return report.findings.some((f) => {
    const skip = redundantKeys(f.evidence, f.summary);
    return Object.entries(f.evidence).some(([k, v]) => !skip.has(k) && (typeof v === 'object' && v !== null ? humanValue(k, v, VALUE_MAX) !== humanValue(k, v, Number.MAX_SAFE_INTEGER) : String(v).length > VALUE_MAX));
  });
}

/** The whole evidence as plain text: the file behind a thread too long for Slack. */
export function evidenceFile(report: Report): FileAttachment {
  const head = `${report.status.toUpperCase()} ${report.kind} ${report.target}: ${withIsoTimes(report.verdict)}\nstarted ${report.startedAt}, took ${report.durationMs} ms`;
  const body = evidenceChunks(report, PLAIN).map((lines) => lines.join('\n'));
  const content = `${[head, ...body].join('\n\n')}\n`;
  const filename = fileNameFor(report.target, 'evidence');
  return { filename, title: `${report.kind} ${report.target}: the whole evidence, ${report.findings.length} finding${report.findings.length === 1 ? '' : 's'}`, content, rows: content.split('\n').length - 1 };
}

/** One chunk (a list of lines) per finding, worst first, then the plan and the results. */
function evidenceChunks(report: Report, style: Style): string[][] {
  const order: Record<Finding['severity'], number> = { error: 0, critical: 1, warning: 2, info: 3 };
  const findings = report.findings.map((f, i) => ({ f, i })).sort((a, b) => order[a.f.severity] - order[b.f.severity] || a.i - b.i);
  const fixes = fixesOnce(findings.map(({ f }) => f));
  const chunks = findings.map(({ f }, i) => findingDetail(f, report.target, style, fixes[i]));
  if (report.plan) chunks.push(planLines(report.plan.id, report.plan.steps, style));
  if (report.results) chunks.push(resultLines(report.results, style));
  return chunks;
}

function findingDetail(f: Finding, target: string, style: Style, fix: FixToSay | undefined): string[] {
  const lines = [`${style.severity(f)} — ${style.text(subjectText(f.subject))}`, style.text(f.summary)];
  const skip = redundantKeys(f.evidence, f.summary);
  const change = macChange(f.evidence);
  if (change) {
    skip.add('recorded').add('live');
    lines.push(`• MAC: ${style.text(change)}`);
  }
  const handed = option6Handed(f.evidence);
  if (handed) {
    skip.add('option6').add('who');
    lines.push(`• DHCP option 6 (DNS servers) ${style.text(handed)}`);
  }
  for (const [key, value] of Object.entries(f.evidence)) {
    if (skip.has(key) || !worthShowing(key, value)) continue;
    const label = humanLabel(key);
    if (typeof value === 'string' && value.includes('\n')) {
      if (needsFile(value)) lines.push(...fileNote(key, value, f.evidence, target, style));
      else lines.push(`• ${label}:`, style.pre(value));
      continue;
    }
    lines.push(`• ${label}: ${style.text(humanValue(key, value, style.valueMax))}`);
  }
  if (fix) {
    const shared = sharedNote(fix);
    lines.push(`${style.bold('Fix:')} ${style.text(fixBeyondEvidence(f))}${shared ? ` ${style.italic(`(${shared})`)}` : ''}`);
  }
  return lines;
}

/** A text too long for a message: a table shows its head; either way the note names its file in the thread. */
function fileNote(key: string, text: string, evidence: Record<string, unknown>, target: string, style: Style): string[] {
  const table = isTableKey(key);
  const rows = table && Array.isArray(evidence.table) ? evidence.table.length : text.split('\n').length - (table ? 1 : 0);
  const note = `• ${humanLabel(key)}: the whole of it (${rows} ${table ? 'rows' : 'lines'}) is in the file ${style.code(fileNameFor(target, key))} in this thread`;
  if (!table) return [note];
  return [note, style.pre(text.split('\n').slice(0, TABLE_HEAD_LINES + 1).join('\n'))];
}

/** A fix that repeats an evidence text (the cause, with its source citation) says only what it adds. */
function fixBeyondEvidence(f: Finding): string {
  let fix = f.fix ?? '';
  for (const value of Object.values(f.evidence)) {
    if (typeof value !== 'string' || value.length < 60 || !fix.includes(value)) continue;
    fix = fix.replace(value, '').replace(/^\s*Cause:\s*/, '').replace(/^[\s.:;]+/, '');
  }
  return fix.trim() || (f.fix ?? '');
}

function planLines(id: string, steps: readonly ReportStep[], style: Style): string[] {
  const head = `${style.bold('Plan')} ${style.code(id)}: ${steps.length} step${steps.length === 1 ? '' : 's'}, in this order`;
  return [head, ...steps.map((s, i) => `${i + 1}. ${style.bold(style.text(s.action))} ${style.text(s.subject)} — ${style.text(s.detail)}`)];
}

function resultLines(results: readonly StepResult[], style: Style): string[] {
  return [`${style.bold('Results')}:`, ...results.map((r) => `• ${r.outcome}: ${style.bold(style.text(r.action))} ${style.text(r.subject)} — ${style.text(r.detail)}`)];
}

/** Chunks into sections at whole lines, sections into messages within Slack's limits. */
function pack(report: Report, chunks: readonly string[][]): EvidenceThread['messages'] {
  const sections: string[] = [];
  for (const chunk of chunks) {
    let current = '';
    for (const raw of chunk) {
      const line = raw.length > SECTION_MAX ? `${raw.slice(0, SECTION_MAX - 40)}… (whole in the JSON report)` : raw;
      if (current && current.length + line.length + 1 > SECTION_MAX) {
        sections.push(current);
        current = '';
      }
      current = current ? `${current}\n${line}` : line;
    }
    if (current) sections.push(current);
  }
  const text = `Evidence for ${report.kind} ${report.target}`;
  const messages: EvidenceThread['messages'] = [];
  let blocks: KnownBlock[] = [];
  let chars = 0;
  for (const s of sections) {
    if (blocks.length && (blocks.length >= MESSAGE_BLOCKS || chars + s.length > MESSAGE_CHARS)) {
      messages.push({ text, blocks });
      blocks = [];
      chars = 0;
    }
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: s } });
    chars += s.length;
  }
  if (blocks.length) messages.push({ text, blocks });
  return messages;
}
