/** `npm run bench -- <name>` runs one benchmark of this folder; without a name it lists them. */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const names = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...rest] = process.argv.slice(2);

if (!name || !names.includes(name)) {
  if (name) console.error(`no benchmark "${name}"`);
  console.error(`usage: npm run bench -- <name>\nbenchmarks: ${names.join(', ')}\neach writes its figures to bench/RESULTS.md`);
  process.exit(name ? 64 : 0);
}
const run = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...rest], { stdio: 'inherit' });
process.exit(run.status ?? 1);
