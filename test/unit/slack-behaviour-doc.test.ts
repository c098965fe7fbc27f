import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'slack-behaviour.md'), 'utf8');

interface Row {
  id: string;
  source: string;
  file: string;
  title: string;
}

/** Every table row but headers: `| Id | Rule | Source | file › title |`. */
function rows(): Row[] {
  return doc
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line) && !/^\|\s*Id\s*\|/.test(line))
    .map((line) => {
      const cells = line.split('|').slice(1, -1).map((c) => c.trim());
      const [file, title] = (cells[3] ?? '').split('›').map((x) => x.trim());
      return { id: cells[0] ?? '', source: cells[2] ?? '', file: file ?? '', title: title ?? '' };
    });
}

/** A test's source with escapes removed, so that `bot\'s` reads as the title does. */
function sourceOf(file: string): string {
  return readFileSync(join(root, 'test', file), 'utf8').replace(/\\(['"`])/g, '$1');
}

describe('docs/slack-behaviour.md', () => {
  const all = rows();

  it('lists rules, each id once', () => {
    expect(all.length).toBeGreaterThan(20);
    expect(all.every((r) => /^S-[A-Z0-9-]+$/.test(r.id))).toBe(true);
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
  });

  it.each(all.map((r) => [r.id, r] as const))('%s names its source and a test that exists', (_id, row) => {
    expect(row.source, `${row.id}: no source`).toMatch(/docs\.slack\.dev|slackapi\/|follows from S-/);
    expect(row.title, `${row.id}: no test title`).not.toBe('');
    expect(existsSync(join(root, 'test', row.file)), `${row.id}: no test file test/${row.file}`).toBe(true);
    const titled = ["'", '"', '`'].some((q) => sourceOf(row.file).includes(`(${q}${row.title}`));
    expect(titled, `${row.id}: no test titled "${row.title}…" in test/${row.file}`).toBe(true);
  });

  it('every rule test of the emulator has its row', () => {
    const ids = [...sourceOf('integration/slack-emulator-rules.test.ts').matchAll(/it\('(S-[A-Z0-9-]+):/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(10);
    for (const id of ids) expect(all.map((r) => r.id), `${id} has a test but no row`).toContain(id);
  });
});
