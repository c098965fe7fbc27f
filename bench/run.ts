/**
 * `npm run bench` lists the benchmarks of this folder and what each writes; `npm run bench -- <name> [args]`
 * runs one, with the node flags its header asks for. They are run one at a time, not all at once:
 * together they take well over half an hour, and each should run on a machine doing nothing else.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Benchmark {
  name: string;
  /** Node flags before `--import tsx` in the header's run line, e.g. --expose-gc. */
  nodeFlags: string[];
  /** What it writes: the RESULTS.md section its header names, else a pointer to its header. */
  writes: string;
}

const here = dirname(fileURLToPath(import.meta.url));

/** A benchmark is a script whose header shows how to run it (`node … bench/<name>.ts`); helpers it forks (mac-diff-worker, mac-diff-lab) are not. */
function benchmarks(): Benchmark[] {
  const found: Benchmark[] = [];
  for (const file of readdirSync(here).filter((f) => f.endsWith('.ts') && f !== 'run.ts').sort()) {
    const name = file.slice(0, -3);
    const text = readFileSync(join(here, file), 'utf8');
    const runLine = new RegExp(`node((?: --[\\w-]+)*) --import tsx bench/${name}\\.ts`).exec(text);
    if (!runLine) continue;
    const section = /`(## [^`]+)` section of bench\/RESULTS\.md/.exec(text.replace(/\n \* /g, ' '));
    found.push({ name, nodeFlags: (runLine[1] ?? '').trim().split(' ').filter(Boolean), writes: section ? `writes bench/RESULTS.md, section "${section[1]}"` : 'writes what its options name (see its header)' });
  }
  return found;
}

function printList(list: Benchmark[]): void {
  const width = Math.max(...list.map((b) => b.name.length));
  console.log('usage: npm run bench -- <name> [its options]   (one at a time, on an otherwise idle machine)\n');
  for (const b of list) console.log(`  ${b.name.padEnd(width)}  ${b.writes}`);
  console.log('\nThe "## faults" section of bench/RESULTS.md is written by a test: npx vitest run test/security/faults.test.ts');
}

const list = benchmarks();
const [name, ...rest] = process.argv.slice(2);
const chosen = list.find((b) => b.name === name);
if (!name || name === '--list') {
  printList(list);
  process.exit(0);
}
if (!chosen) {
  console.error(`no benchmark "${name}"; the benchmarks are: ${list.map((b) => b.name).join(', ')}`);
  process.exit(64);
}
const run = spawnSync(process.execPath, [...chosen.nodeFlags, '--import', 'tsx', join(here, `${chosen.name}.ts`), ...rest], { stdio: 'inherit' });
process.exit(run.status ?? 1);
