import { boundaries, clipWords, splitAt, words } from './finding-brief.ts';

/**
 * A sentence for the main message in at most `max` words, by saying less rather than cutting a
 * word off mid-sentence: first without its bracketed asides, then its first sentence, then its
 * leading clauses (up to a `: ` or `; ` outside brackets). Only a first clause longer than `max`
 * is clipped (with `…`). The whole text belongs in the thread.
 */
export function sayLess(text: string, max: number): string {
  if (wordCount(text) <= max) return text;
  const plain = withoutAsides(text);
  if (wordCount(plain) <= max) return plain;
  const sentence = firstSentence(plain);
  if (wordCount(sentence) <= max) return sentence;
  const lead = leadingClauses(sentence, max);
  return lead ?? clipWords(sentence, max);
}

/** Words a reader counts: an emoji code (`:red_circle:`) or a lone separator (`·`, `—`) is not one. */
export function wordCount(text: string): number {
  return words(text).filter((w) => !/^:[a-z0-9_+-]+:$/.test(w) && !/^[·—–-]$/.test(w)).length;
}

/** The text without its ` (…)` asides, at any depth; a bracket that is not closed is kept. */
export function withoutAsides(text: string): string {
  let out = text;
  for (;;) {
    const next = out.replace(/\s*\([^()]*\)/g, '');
    if (next === out) return out.replace(/\s+([,;:.])/g, '$1').trim();
    out = next;
  }
}

/** Up to the first `. ` outside brackets (an IP's dots have no space after them), without the stop. */
function firstSentence(text: string): string {
  return sentences(text)[0] ?? text;
}

/** The text's sentences, split at `. ` outside brackets, each without its full stop. */
export function sentences(text: string): string[] {
  const all = splitAt(text, /[.]/);
  const last = all.length - 1;
  return all.map((s, i) => (i === last ? s.replace(/\.$/, '') : s)).filter(Boolean);
}

/**
 * The longest run of whole leading clauses within `max` words (ending at a `: ` or `; `, else at a
 * `, `), or undefined when even the first is longer.
 */
function leadingClauses(text: string, max: number): string | undefined {
  const within = (stop: RegExp) => boundaries(text, stop).map((end) => text.slice(0, end)).filter((lead) => wordCount(lead) <= max).at(-1);
  return within(/[:;]/) ?? within(/,/);
}
