import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'maas-behaviour.md'), 'utf8');

interface Row {
  id: string;
  upstream: string;
  file: string;
  title: string;
}

/**
 * Every table row but headers. Rows with an id (R-…) name their test as `file › title`; the others
 * as `` `test/file` ("title") ``. The upstream cell is the one before the test.
 */
function rows(): Row[] {
  return doc
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line) && !/^\|\s*(Id|Rule)\s*\|/.test(line))
    .map((line, n) => {
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      const test = cells[cells.length - 1] ?? '';
      const upstream = cells[cells.length - 2] ?? '';
      const id = /^R-[A-Z0-9.-]+$/.test(cells[0] ?? '') ? (cells[0] as string) : `row ${n + 1}: ${(cells[0] ?? '').slice(0, 40)}`;
      const arrow = test.split('›').map((x) => x.trim());
      if (arrow.length === 2) return { id, upstream, file: arrow[0] ?? '', title: arrow[1] ?? '' };
      const file = /`test\/([^`]+)`/.exec(test)?.[1] ?? '';
      const title = /\("([^"]+)"\)/.exec(test)?.[1] ?? '';
      return { id, upstream, file, title };
    });
}

/** A test's source with escapes removed, so that `MAAS\'s` reads as the title does. */
const sources = new Map<string, string>();
function sourceOf(file: string): string {
  let text = sources.get(file);
  if (text === undefined) {
    text = readFileSync(join(root, 'test', file), 'utf8').replace(/\\(['"`])/g, '$1');
    sources.set(file, text);
  }
  return text;
}

describe('docs/maas-behaviour.md', () => {
  const all = rows();

  it('lists rules, each id once', () => {
    expect(all.length).toBeGreaterThan(20);
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
  });

  it.each(all.map((r) => [r.id, r] as const))('%s names its upstream file and a test that exists', (_id, row) => {
    expect(row.upstream).toMatch(/\.(py|go|j2|yaml|sh)\b|snap\//);
    expect(row.title, `${row.id}: no test title`).not.toBe('');
    expect(existsSync(join(root, 'test', row.file)), `${row.id}: no test file test/${row.file}`).toBe(true);
    const source = sourceOf(row.file);
    const titled = ["'", '"', '`'].some((q) => source.includes(`(${q}${row.title}`));
    expect(titled, `${row.id}: no test titled "${row.title}…" in test/${row.file}`).toBe(true);
  });

  it('every rule test in maas-sim-rules.test.ts has its row', () => {
    const ids = [...sourceOf('integration/maas-sim-rules.test.ts').matchAll(/it\('(R-[A-Z0-9.-]+):/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(10);
    for (const id of ids) expect(all.map((r) => r.id), `${id} has a test but no row`).toContain(id);
  });
});
