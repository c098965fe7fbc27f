import type { Report } from '../../core/report.ts';
import { humanLabel } from './evidence-text.ts';
import { isObject } from './message-limits.ts';

/**
 * Long lists as files: a table or a snippet too long for a message (300 drifted machines) is
 * uploaded whole in the message's thread; the message shows its head and says how many rows
 * the file holds. A snippet is never shown cut: a half snippet pasted is worse than none.
 */

export interface FileAttachment {
  filename: string;
  title: string;
  content: string;
  /** Data rows in the file (a table's header not counted). */
  rows: number;
}

/** Beyond this many lines or characters a multi-line evidence text goes to a file. */
const FILE_LINES = 25;
const FILE_CHARS = 1500;
/** Lines of a table shown in the message when the whole of it is in a file. */
export const TABLE_HEAD_LINES = 10;

export function needsFile(text: string): boolean {
  return text.length > FILE_CHARS || text.split('\n').length > FILE_LINES;
}

/** A document (`…Markdown` evidence: the timeline) is always a file, whatever its length. */
export function isDocumentKey(key: string): boolean {
  return key.endsWith('Markdown');
}

/** Table-like evidence keys show their head in the message; anything else only the note. */
export function isTableKey(key: string): boolean {
  return /table/i.test(key);
}

export function fileNameFor(target: string, key: string): string {
  const base = `${target}-${fileStem(key)}`.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 80);
  return `${base}${key === 'snippet' ? '.tf' : isDocumentKey(key) ? '.md' : '.txt'}`;
}

/** `tableText` reads as `table`, a document key such as `timelineMarkdown` as `timeline`. */
function fileStem(key: string): string {
  if (key === 'tableText') return 'table';
  return isDocumentKey(key) ? key.replace(/Markdown$/, '') || key : key;
}

/** The files a report's message refers to: every multi-line evidence text too long to show. */
export function attachmentsFor(report: Report): FileAttachment[] {
  const files: FileAttachment[] = [];
  const seen = new Set<string>();
  for (const finding of report.findings) {
    for (const [key, value] of Object.entries(finding.evidence)) {
      if (typeof value !== 'string' || !value.includes('\n') || !(needsFile(value) || isDocumentKey(key))) continue;
      const filename = fileNameFor(report.target, key);
      if (seen.has(filename)) continue;
      seen.add(filename);
      files.push(fileFor(report, key, value, finding.evidence));
    }
  }
  return files;
}

function fileFor(report: Report, key: string, text: string, evidence: Record<string, unknown>): FileAttachment {
  const filename = fileNameFor(report.target, key);
  if (isTableKey(key)) {
    const records = Array.isArray(evidence.table) ? evidence.table.filter(isObject) : [];
    // The whole table from the structured rows: the text form may itself be cut short.
    const content = records.length ? textTable(records) : text;
    const rows = records.length || Math.max(0, text.split('\n').length - 1);
    return { filename, title: `${report.kind} ${report.target}: the whole table, ${rows} row${rows === 1 ? '' : 's'}`, content, rows };
  }
  const rows = text.split('\n').length;
  const what = key === 'snippet' ? 'the pinned-MAC snippet, pasteable whole' : `the whole ${humanLabel(key)}`;
  return { filename, title: `${report.kind} ${report.target}: ${what} (${rows} lines)`, content: text.endsWith('\n') ? text : `${text}\n`, rows };
}

/** Records as an aligned plain-text table, every column every record has, headers in capitals. */
export function textTable(records: readonly Record<string, unknown>[]): string {
  const columns = [...new Set(records.flatMap((r) => Object.keys(r)))].filter((c) => records.some((r) => cell(r[c]) !== ''));
  const header = columns.map((c) => c.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase());
  const cells = records.map((r) => columns.map((c) => cell(r[c])));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((v, i) => (i === row.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...cells.map(line)].join('\n') + '\n';
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(cell).join(', ');
  if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${k}=${cell(v)}`).join(' ');
  return String(value).replace(/\s+/g, ' ');
}

