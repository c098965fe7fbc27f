/**
 * dhcpd.conf's tokens as ISC dhcpd 4.4 reads them (common/conflex.c): `#` starts a comment to the
 * end of the line, except inside a string; a string honours backslash escapes (`\t \r \n \b`,
 * `\ooo`, `\xhh`, and `\` before any other character stands for that character, so `\"` does not
 * end it); a word is a name or number (letters, digits, `-`, `_`); every other character is a
 * token of its own (`; { } , . : = ( )`). Keywords are case-insensitive (dhcpd.conf(5)).
 */

import { keepFirst } from './keep-first.ts';

export type TokenKind = 'word' | 'string' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** A word as written, a string's decoded value, or the punctuation character. */
  text: string;
  line: number;
}

/** dhcpd's token buffer (`tokbuf[1500]`, includes/dhcpd.h): a string, word or run of whitespace this long is a parse error. */
export const DHCPD_TOKEN_MAX = 1500;

export interface LexProblem {
  line: number;
  reason: string;
}

function isWordChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45 || code === 95;
}

/** isspace() in the C locale: space, \t \n \v \f \r. */
function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

function decodeEscape(text: string, at: number): { char: string; next: number } {
  const c = text[at] ?? '';
  const simple: Record<string, string> = { t: '\t', r: '\r', n: '\n', b: '\b' };
  if (c in simple) return { char: simple[c] as string, next: at + 1 };
  if (c === 'x') {
    const hex = /^[0-9A-Fa-f]{1,2}/.exec(text.slice(at + 1, at + 3))?.[0] ?? '';
    return { char: String.fromCharCode(parseInt(hex || '0', 16)), next: at + 1 + hex.length };
  }
  if (c >= '0' && c <= '3') {
    const oct = /^[0-7]{1,3}/.exec(text.slice(at, at + 3))?.[0] ?? c;
    return { char: String.fromCharCode(parseInt(oct, 8)), next: at + oct.length };
  }
  return { char: c, next: at + 1 };
}

/** Reads tokens one at a time (nothing is kept behind it: memory stays flat however long the file). */
export class Lexer {
  #at = 0;
  #line = 1;
  #peeked: Token | undefined;
  /** The first `maxProblems` problems; the rest are counted in `moreProblems`. */
  readonly problems: LexProblem[] = [];
  moreProblems = 0;

  constructor(
    private readonly text: string,
    private readonly maxProblems: number,
  ) {}

  peek(): Token {
    this.#peeked ??= this.#read();
    return this.#peeked;
  }

  next(): Token {
    const token = this.peek();
    this.#peeked = undefined;
    return token;
  }

  #read(): Token {
    const text = this.text;
    for (;;) {
      const start = this.#at;
      while (this.#at < text.length && isSpace(text.charCodeAt(this.#at))) {
        if (text.charCodeAt(this.#at) === 10) this.#line++;
        this.#at++;
      }
      if (this.#at - start >= DHCPD_TOKEN_MAX) this.#problem({ line: this.#line, reason: `${this.#at - start} whitespace characters in a row (dhcpd stops: "whitespace too long, buffer overflow")` });
      if (this.#at >= text.length) return { kind: 'eof', text: '', line: this.#line };
      const c = text[this.#at] as string;
      if (c === '#') {
        const end = text.indexOf('\n', this.#at);
        this.#at = end < 0 ? text.length : end;
        continue;
      }
      if (c === '"') return this.#string();
      if (isWordChar(text.charCodeAt(this.#at))) return this.#word();
      this.#at++;
      return { kind: 'punct', text: c, line: this.#line };
    }
  }

  #problem(problem: LexProblem): void {
    this.moreProblems += keepFirst(this.problems, problem, this.maxProblems);
  }

  #string(): Token {
    const text = this.text;
    const line = this.#line;
    let value = '';
    let length = 0;
    const keep = (char: string) => {
      if (length++ < DHCPD_TOKEN_MAX) value += char;
    };
    let i = this.#at + 1;
    for (;;) {
      if (i >= text.length) {
        this.#problem({ line, reason: 'a string that never ends (dhcpd: "eof in string constant")' });
        break;
      }
      const c = text[i] as string;
      if (c === '"') {
        i++;
        break;
      }
      if (c === '\n') this.#line++;
      if (c === '\\') {
        const decoded = decodeEscape(text, i + 1);
        if (text[i + 1] === '\n') this.#line++;
        keep(decoded.char);
        i = decoded.next;
        continue;
      }
      keep(c);
      i++;
    }
    this.#at = i;
    if (length >= DHCPD_TOKEN_MAX) this.#problem({ line, reason: `a string of ${length} characters (dhcpd: "string constant larger than internal buffer")` });
    return { kind: 'string', text: value, line };
  }

  #word(): Token {
    const text = this.text;
    const start = this.#at;
    while (this.#at < text.length && isWordChar(text.charCodeAt(this.#at))) this.#at++;
    const word = text.slice(start, this.#at);
    if (word.length >= DHCPD_TOKEN_MAX) this.#problem({ line: this.#line, reason: `a word of ${word.length} characters (dhcpd: "token larger than internal buffer")` });
    return { kind: 'word', text: word.length > DHCPD_TOKEN_MAX ? word.slice(0, DHCPD_TOKEN_MAX) : word, line: this.#line };
  }
}

export function isPunct(token: Token | undefined, char: string): boolean {
  return token?.kind === 'punct' && token.text === char;
}
