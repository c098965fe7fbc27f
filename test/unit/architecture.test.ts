import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The layering of docs/architecture.md, enforced: every import in src/, commands/ and jobs/ is
 * read, and each file is placed in a layer by its path. A file may import its own layer and
 * those below it; the few imports that point up are listed in the doc with their reason.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Lowest first. A path ending in `/` is a folder; the longest matching path decides. Must equal the table in docs/architecture.md. */
const LAYERS: readonly { name: string; paths: readonly string[] }[] = [
  {
    name: 'base',
    paths: [
      'src/core/config.ts', 'src/core/config-schema.ts', 'src/core/duration.ts', 'src/core/env.ts', 'src/core/errors.ts', 'src/core/kubeconfig-secrets.ts', 'src/core/log.ts',
      'src/core/login-throttle.ts', 'src/core/mac.ts', 'src/core/package-version.ts', 'src/core/peer-outcome.ts', 'src/core/redact.ts', 'src/core/report.ts', 'src/core/secret.ts', 'src/core/targets.ts',
      'src/core/with-timeout.ts',
    ],
  },
  { name: 'adapters', paths: ['src/adapters/adapters.ts', 'src/adapters/real-adapters.ts', 'src/adapters/maas/', 'src/adapters/ssh/', 'src/adapters/kube/'] },
  { name: 'engine', paths: ['src/engine/job-types.ts', 'src/engine/notifier.ts', 'src/engine/metrics.ts', 'src/engine/queue/', 'src/engine/repair/', 'src/engine/audit/'] },
  { name: 'features', paths: ['src/features/'] },
  {
    name: 'edge',
    paths: ['src/edge/command-types.ts', 'src/edge/command-audit.ts', 'src/edge/slack/', 'src/edge/alerts/', 'src/edge/http/health.ts', 'src/edge/http/queue-board.ts', 'src/edge/http/queue-dashboard.ts', 'src/edge/terminal/sites.ts', 'src/edge/terminal/text-render.ts'],
  },
  { name: 'root', paths: ['src/main.ts', 'src/cli.ts', 'commands/', 'jobs/'] },
];

/** The composition root: the only files in src/ that may import commands/ or jobs/. */
const COMPOSITION_ROOT = ['src/main.ts', 'src/cli.ts'];
const MAX_UPWARD = 3;

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  from: string;
  to: string;
}

const IMPORT_RE = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?'([^']+)'|import\(\s*'([^']+)'\s*\)/gm;

/** Every relative import (static, re-export, type-only and dynamic) of every file under src/, commands/ and jobs/. */
function projectImports(): Import[] {
  return ['src', 'commands', 'jobs'].flatMap(walk).flatMap((from) => {
    const text = readFileSync(join(ROOT, from), 'utf8');
    return [...text.matchAll(IMPORT_RE)]
      .map((m) => m[1] ?? m[2] ?? '')
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => ({ from, to: relative(ROOT, resolve(ROOT, dirname(from), spec)) }));
  });
}

function layerOf(path: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  LAYERS.forEach((layer, index) => {
    for (const p of layer.paths) {
      const hit = p.endsWith('/') ? path.startsWith(p) : path === p;
      if (hit && (!best || p.length > best.length)) best = { layer: index, length: p.length };
    }
  });
  return best?.layer;
}

/** The rows of a markdown table under `heading` in docs/architecture.md, cells trimmed. */
function docTable(heading: string): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no "## ${heading}"`);
  const section = doc.slice(start + 1).split(/\n## /)[0] as string;
  return section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .slice(1)
    .map((line) => line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()));
}

function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
}

const key = (i: Import) => `${i.from} -> ${i.to}`;
const imports = projectImports();
const upward = imports.filter((i) => {
  const from = layerOf(i.from);
  const to = layerOf(i.to);
  return from !== undefined && to !== undefined && to > from;
});

describe('architecture', () => {
  it('reads the imports (the scan itself works)', () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(imports).toContainEqual({ from: 'src/main.ts', to: 'commands/index.ts' });
  });

  it('places every file of src/, commands/ and jobs/ in a layer', () => {
    const files = ['src', 'commands', 'jobs'].flatMap(walk);
    expect(files.filter((f) => layerOf(f) === undefined)).toEqual([]);
  });

  it('lets only the composition root (src/main.ts, src/cli.ts) import commands/ or jobs/', () => {
    const offending = imports.filter((i) => i.from.startsWith('src/') && !COMPOSITION_ROOT.includes(i.from) && /^(commands|jobs)\//.test(i.to));
    expect(offending.map(key)).toEqual([]);
  });

  it('imports nothing from lab/, bench/ or test/ outside the composition root', () => {
    const offending = imports.filter((i) => layerOf(i.from) !== LAYERS.length - 1 && /^(lab|bench|test)\//.test(i.to));
    expect(offending).toEqual([]);
  });

  it(`has at most ${MAX_UPWARD} imports from a lower layer to a higher one, exactly those docs/architecture.md lists`, () => {
    const listed = docTable('Imports that point up').map((row) => {
      const [from, to] = codeSpans(row[0] ?? '');
      return { from: from ?? '', to: to ?? '' };
    });
    expect(upward.map(key).sort()).toEqual(listed.map(key).sort());
    expect(upward.length).toBeLessThanOrEqual(MAX_UPWARD);
  });

  it('uses the layer table of docs/architecture.md', () => {
    const rows = docTable('Layers').map((row) => ({ name: (row[0] ?? '').replace(/^\d+\.\s*/, '').replace(/\*/g, ''), paths: codeSpans(row[1] ?? '') }));
    expect(rows).toEqual(LAYERS.map((l) => ({ name: l.name, paths: [...l.paths] })));
  });
});
