/** Subjects a repair kind counts by name (`9 machines`); any other kind's few subjects are named. */
export const SUBJECT_NOUN: Readonly<Record<string, string>> = { 'fix-macs': 'machine', 'fix-dns': 'DNS record' };
const NAMED_SUBJECTS = 4;

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What the steps act on: `9 machines`, `1 DNS record`, or, for a repair whose steps act on
 * different things, those things by name (`forwarder 127.0.0.1:41285, subnet 10.20.0.0/24, site-b
 * and canary site-b-node10`), counted only when there are more than NAMED_SUBJECTS.
 */
export function subjectsPhrase(kind: string, subjects: readonly string[]): string {
  const distinct = [...new Set(subjects)];
  const noun = SUBJECT_NOUN[kind];
  if (noun || distinct.length > NAMED_SUBJECTS) return plural(distinct.length, noun ?? 'subject');
  return distinct.length > 1 ? `${distinct.slice(0, -1).join(', ')} and ${distinct.at(-1)}` : (distinct[0] ?? 'nothing');
}
