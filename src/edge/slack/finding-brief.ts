import type { Finding } from '../../core/report.ts';

/**
 * A finding in one short line for the main message: its sentence up to the first `: ` or `; `
 * outside brackets (the rest, the why, is in the thread), two clauses when the first only names
 * the subject, at most MAX_WORDS words with the code and subject counted.
 */
export const MAX_WORDS = 25;
const SHORT_CLAUSE_WORDS = 5;
/** A subject longer than this (a container image) is left to the thread: the brief names it in words. */
const MAX_SUBJECT = 48;

/** The text split at each `: ` or `; ` outside brackets. */
export function clauses(text: string): string[] {
  return splitAt(text, /[:;]/);
}

/** The text split at each `stop` character followed by a space, outside brackets; pieces trimmed, empty ones dropped. */
export function splitAt(text: string, stop: RegExp): string[] {
  const out: string[] = [];
  let start = 0;
  for (const end of boundaries(text, stop)) {
    out.push(text.slice(start, end));
    start = end + 2;
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** Where a clause ends: the index of each `stop` character followed by a space, outside brackets. */
export function boundaries(text: string, stop: RegExp): number[] {
  const out: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '(' || c === '[') depth += 1;
    else if ((c === ')' || c === ']') && depth > 0) depth -= 1;
    else if (depth === 0 && stop.test(c) && text[i + 1] === ' ') out.push(i);
  }
  return out;
}

export function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** At most `max` words, with an ellipsis when cut. */
export function clipWords(text: string, max: number): string {
  const all = words(text);
  return all.length <= max ? all.join(' ') : `${all.slice(0, Math.max(1, max)).join(' ')}…`;
}

/** The subject (when the sentence does not name it) and the sentence's first clause: plain text, not escaped. */
export function findingBrief(f: Pick<Finding, 'code' | 'subject' | 'summary'>): { subject?: string; brief: string } {
  const parts = clauses(f.summary);
  let brief = parts[0] ?? f.summary;
  if (parts.length > 1 && (words(brief).length < SHORT_CLAUSE_WORDS || brief.startsWith(f.subject))) brief = `${brief}: ${parts[1]}`;
  const named = brief.includes(f.subject) || f.subject.length > MAX_SUBJECT;
  const room = MAX_WORDS - 1 - (named ? 0 : words(f.subject).length);
  return { ...(named ? {} : { subject: f.subject }), brief: clipWords(brief, room) };
}
