import { isPunct, type Token } from './lexer.ts';
import type { ServerEntry } from './conf-model.ts';
import { ipv4Text } from './ipv4.ts';

/** Tokens as dhcpd.conf text, one line: `substring (hardware, 1, 3) = 52:54:00`. */
export function wordsText(words: readonly Token[]): string {
  let out = '';
  for (const [i, w] of words.entries()) {
    const text = w.kind === 'string' ? JSON.stringify(w.text) : w.text;
    const prev = words[i - 1];
    const tight = prev !== undefined && (['.', ':', '('].includes(prev.text) && prev.kind === 'punct' || (w.kind === 'punct' && ['.', ':', ',', ')'].includes(w.text)));
    out += (i === 0 || tight ? '' : ' ') + text;
  }
  return out;
}

/** At most `max` tokens as text, `…` marking the rest: what a message quotes of a statement. */
export function shortText(words: readonly Token[], max = 40): string {
  return words.length > max ? `${wordsText(words.slice(0, max))} …` : wordsText(words);
}

/** Splits tokens at top-level commas. */
export function splitCommas(words: readonly Token[]): Token[][] {
  const parts: Token[][] = [[]];
  let depth = 0;
  for (const w of words) {
    if (isPunct(w, '(')) depth++;
    if (isPunct(w, ')')) depth--;
    if (depth === 0 && isPunct(w, ',')) parts.push([]);
    else parts.at(-1)?.push(w);
  }
  return parts;
}

/** `10 . 20 . 0 . 53` as one dotted quad (common/parse.c parse_numeric_aggregate), or undefined. */
export function dottedQuad(words: readonly Token[]): number | undefined {
  if (words.length !== 7) return undefined;
  let n = 0;
  for (const [i, w] of words.entries()) {
    if (i % 2 === 1) {
      if (!isPunct(w, '.')) return undefined;
    } else if (w.kind === 'word' && /^\d+$/.test(w.text) && Number(w.text) <= 255) n = n * 256 + Number(w.text);
    else return undefined;
  }
  return n;
}

/**
 * One ip-address value (common/parse.c parse_ip_addr_or_hostname): a dotted quad, or a dotted
 * host name that dhcpd resolves when it first needs the option (dhcp-options(5), "ip-address").
 */
export function serverEntry(words: readonly Token[]): ServerEntry | undefined {
  const quad = dottedQuad(words);
  if (quad !== undefined) return { address: ipv4Text(quad) };
  if (words.length === 0 || words.length % 2 === 0) return undefined;
  for (const [i, w] of words.entries()) {
    if (i % 2 === 1 ? !isPunct(w, '.') : w.kind !== 'word') return undefined;
  }
  if (/^\d/.test(words[0]?.text ?? '') && words.every((w, i) => i % 2 === 1 || /^\d+$/.test(w.text))) return undefined;
  return { name: words.map((w) => w.text).join('').toLowerCase() };
}

/** `52:54:00:aa:00:01` from `52 : 54 : 00 : aa : 00 : 01`, bytes as two lower-case hex digits. */
export function colonHex(words: readonly Token[]): number[] | undefined {
  if (words.length === 0 || words.length % 2 === 0) return undefined;
  const bytes: number[] = [];
  for (const [i, w] of words.entries()) {
    if (i % 2 === 1) {
      if (!isPunct(w, ':')) return undefined;
    } else if (w.kind === 'word' && /^[0-9a-f]{1,2}$/i.test(w.text)) bytes.push(parseInt(w.text, 16));
    else return undefined;
  }
  return bytes;
}

export function macText(bytes: readonly number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

export function keyword(words: readonly Token[], index = 0): string {
  const w = words[index];
  return w?.kind === 'word' ? w.text.toLowerCase() : '';
}

