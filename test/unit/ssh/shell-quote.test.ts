import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { quoteArg, raw, sh } from '../../../src/adapters/ssh/shell-quote.ts';

/** Runs a command line the way the remote shell would: /bin/sh -c. */
function runInShell(command: string, cwd: string): string {
  return execFileSync('/bin/sh', ['-c', command], { cwd, encoding: 'utf8' });
}

describe('sh tagged template through a real /bin/sh', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shell-quote-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const hostile = [
    '$(touch canary)',
    '`touch canary`',
    'zone; touch canary',
    'a | touch canary',
    'a && touch canary',
    "it's",
    '"double" and \'single\'',
    "'; touch canary; echo '",
    'line one\ntouch canary',
    'carriage\rreturn',
    '$HOME ${PATH} $((1+1))',
    '*',
    '~',
    '-n',
    'tab\there',
    '\\backslash\\',
    '',
    ' leading and trailing ',
    'ünïcödé ✓',
    '>canary',
    '<canary',
    '#not a comment',
    '!!',
  ];

  it.each(hostile)('passes %j as exactly one literal word', (value) => {
    const out = runInShell(sh`printf '<%s>' ${value}`, dir);
    expect(out).toBe(`<${value}>`);
    expect(existsSync(join(dir, 'canary'))).toBe(false);
  });

  it('passes every element of an array as its own word', () => {
    const values = ['a b', '$(touch canary)', "'", ''];
    const out = runInShell(sh`printf '<%s>' ${values}`, dir);
    expect(out).toBe(values.map((v) => `<${v}>`).join(''));
    expect(existsSync(join(dir, 'canary'))).toBe(false);
  });

  it('joins a quoted value to a literal prefix as one word (dig @server)', () => {
    const out = runInShell(sh`printf '<%s>' @${'10.0.0.1; touch canary'}`, dir);
    expect(out).toBe('<@10.0.0.1; touch canary>');
    expect(existsSync(join(dir, 'canary'))).toBe(false);
  });

  it('embeds another SafeCommand with raw() unquoted', () => {
    const inner = sh`printf '<%s>' ${'x y'}`;
    expect(runInShell(sh`${raw(inner)}; printf '<%s>' ${'z'}`, dir)).toBe('<x y><z>');
  });

  it('renders numbers as words', () => {
    expect(sh`dig -p ${53}`).toBe('dig -p 53');
  });
});

describe('quoteArg', () => {
  it('leaves plain words bare and quotes anything else', () => {
    expect(quoteArg('maas-internal')).toBe('maas-internal');
    expect(quoteArg('10.20.0.2')).toBe('10.20.0.2');
    expect(quoteArg('a b')).toBe("'a b'");
    expect(quoteArg('')).toBe("''");
    expect(quoteArg("it's")).toBe("'it'\\''s'");
  });

  it('refuses a NUL byte, which no shell word can carry', () => {
    expect(() => quoteArg('a\0b')).toThrow(/NUL/);
  });
});
