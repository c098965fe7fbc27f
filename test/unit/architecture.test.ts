import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The layering of docs/architecture.md, enforced: every import in src/, commands/ and jobs/ is
 * read, and each file is placed in a layer by its folder. A file may import its own layer and
 * those below it, never one above, and no chain of imports comes back to where it started.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Lowest first: a file's layer is its folder. Must equal the table in docs/architecture.md. */
const LAYERS: readonly { name: string; paths: readonly string[] }[] = [
  { name: 'core', paths: ['src/core/'] },
  { name: 'adapters', paths: ['src/adapters/'] },
  { name: 'engine', paths: ['src/engine/'] },
  { name: 'features', paths: ['src/features/'] },
  { name: 'edge', paths: ['src/edge/'] },
  { name: 'root', paths: ['src/main.ts', 'src/cli.ts', 'commands/', 'jobs/'] },
];

/** The composition root: the only files in src/ that may import commands/ or jobs/, and the only ones src/ holds directly. */
const COMPOSITION_ROOT = ['src/main.ts', 'src/cli.ts'];

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
    return /\.m?ts$/.test(path) ? [path] : [];
  });
}

interface Import {
  from: string;
  to: string;
}

const IMPORT_RE = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?'([^']+)'|import\(\s*'([^']+)'\s*\)/gm;

/** Every relative import (static, re-export, type-only and dynamic) of every file under src/, commands/ and jobs/. */
function projectImports(dirs: readonly string[] = ['src', 'commands', 'jobs']): Import[] {
  return dirs.flatMap(walk).flatMap((from) => {
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

/** Each import cycle once, as the files around it (Tarjan's strongly connected components of more than one file, or a file importing itself). */
function importCycles(all: readonly Import[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const i of all) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
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

  it('has no import from a lower layer to a higher one', () => {
    expect(upward.map(key)).toEqual([]);
  });

  it('holds no file directly in src/ but the composition root', () => {
    const own = readdirSync(join(ROOT, 'src')).filter((name) => !statSync(join(ROOT, 'src', name)).isDirectory());
    expect(own.map((name) => `src/${name}`).sort()).toEqual([...COMPOSITION_ROOT].sort());
  });

  it('has no import cycle in src/, commands/, jobs/ or lab/', () => {
    expect(importCycles(projectImports(['src', 'commands', 'jobs', 'lab']))).toEqual([]);
  });

  it('uses the layer table of docs/architecture.md', () => {
    const rows = docTable('Layers').map((row) => ({ name: (row[0] ?? '').replace(/^\d+\.\s*/, '').replace(/\*/g, ''), paths: codeSpans(row[1] ?? '') }));
    expect(rows).toEqual(LAYERS.map((l) => ({ name: l.name, paths: [...l.paths] })));
  });
});
