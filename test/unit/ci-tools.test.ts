import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * A fresh machine must get every program the tests run: .ci/run installs each one that is
 * missing, and the README's table names it with its Debian package.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Programs run by the tests and the lab: spawn/execFile of a literal name, and the `for (const program of [...])` tool checks. */
function programsRun(): Set<string> {
  const names = new Set<string>();
  for (const dir of ['test', 'lab']) {
    for (const file of readdirSync(join(ROOT, dir), { recursive: true }) as string[]) {
      if (!file.endsWith('.ts')) continue;
      const text = readFileSync(join(ROOT, dir, file), 'utf8');
      for (const m of text.matchAll(/\b(?:spawn|spawnSync|execFile|execFileSync)\(\s*'([a-z0-9-]+)'/g)) names.add(m[1] as string);
      for (const m of text.matchAll(/for \(const program of \[([^\]]+)\]\)/g)) for (const p of (m[1] as string).matchAll(/'([a-z0-9-]+)'/g)) names.add(p[1] as string);
    }
  }
  return names;
}

/** Run by the tests only when installed (the deploy test's comparison). */
const OPTIONAL = new Set(['kubectl']);
/** Debian's essential packages (dash, coreutils): on every machine, never installed by hand. */
const ESSENTIAL = new Set(['sh', 'sleep']);
/** Run inside the fix-resolver tests' shell rather than spawned by name. */
const BY_SHELL = ['ps'];

describe('.ci/run and the README', () => {
  const programs = [...programsRun(), ...BY_SHELL].filter((p) => !ESSENTIAL.has(p));

  it('find the programs the tests run', () => {
    expect(programs).toEqual(expect.arrayContaining(['dig', 'dnsmasq', 'openssl', 'redis-server', 'ssh-keygen', 'getent']));
  });

  it('.ci/run installs every program the tests need when it is missing', () => {
    for (const program of programs.filter((p) => !OPTIONAL.has(p))) expect(ci, program).toMatch(new RegExp(`command -v ${program} >/dev/null \\|\\| missing\\+=\\(`));
  });

  it('the README names every one of them, and the Node version .ci/run insists on', () => {
    for (const program of programs) expect(readme, program).toContain(`\`${program}\``);
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/^>=\d+\.\d+$/);
    expect(readme).toContain(`Node ${engines.slice(2)} or newer`);
    expect(ci).toContain('package.json engines');
  });
});
