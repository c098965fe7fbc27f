import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copiesOf, parseDockerfile } from '../helpers/dockerfile.ts';

/*
 * Builds the runtime layout the Dockerfile builds, in a temp dir: package.json + lockfile with
 * `npm ci --omit=dev`, and dist/ from `tsc -p tsconfig.build.json`. Then runs the compiled CLI with
 * plain node (no tsx, which a production install lacks). This proves the build emits runnable
 * JavaScript and that nothing the process loads at run time lives in devDependencies or the lab.
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }> };
/** Top-level packages that `npm ci --omit=dev --omit=optional` installs (direct or not), by the lockfile. */
const productionPackages = new Set(
  Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && !entry.dev && !entry.optional && !entry.devOptional)
    .map(([path]) => path.slice('node_modules/'.length)),
);
const devOnly = Object.keys(pkg.devDependencies).filter((name) => !productionPackages.has(name));

/** What the runtime stage copies from the build stage, relative to /app. */
function shippedPaths(): string[] {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const runtime = stages.at(-1);
  if (!runtime) throw new Error('Dockerfile has no stage');
  return copiesOf(runtime)
    .filter((c) => c.from === 'build')
    .flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Bare module names a file loads at run time (`import type` and `export type` are erased). */
function runtimeImports(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [
    ...[...code.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1]),
    ...[...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]),
  ];
  return specifiers.filter((s): s is string => Boolean(s) && !s!.startsWith('.') && !s!.startsWith('node:'));
}

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

describe('production bundle', () => {
  let dir: string;
  let install: { flags: string; stderr: string };
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  /** Plain node: no --import, no loader, and no tsx to find. */
  const node = (args: string[], env: NodeJS.ProcessEnv = process.env) => run(process.execPath, args, { cwd: dir, env: { ...env, NODE_OPTIONS: '' }, timeout: 30_000 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mct-bundle-'));
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    cpSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const base = ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
    // The npm cache normally holds everything; a fresh machine may still need the registry's metadata.
    try {
      const { stderr } = await run('npm', [...base, '--offline'], { cwd: dir, timeout: 90_000 });
      install = { flags: '--offline', stderr };
    } catch {
      const { stderr } = await run('npm', [...base, '--prefer-offline'], { cwd: dir, timeout: 90_000 });
      install = { flags: '--prefer-offline', stderr };
    }
    // The build the Dockerfile runs, emitted into the bundle instead of the checkout.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], { cwd: ROOT, timeout: 240_000 });
  }, 330_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs the dependencies and none of the dev-only packages, tsx among them', () => {
    expect(install.flags).toMatch(/offline/);
    for (const name of Object.keys(pkg.dependencies)) expect(existsSync(join(dir, 'node_modules', name)), name).toBe(true);
    expect(devOnly).toEqual(expect.arrayContaining(['vitest', 'typescript', 'eslint', 'tsx']));
    for (const name of devOnly) expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
  });

  it('the runtime stage ships what this bundle holds: package.json and dist', () => {
    expect(shippedPaths().sort()).toEqual(['dist', 'package.json']);
  });

  it('compiles the CLI, the jobs and the commands to JavaScript, and leaves the lab, benchmarks and tests out', () => {
    for (const path of ['dist/src/cli.js', 'dist/src/main.js', 'dist/jobs/index.js', 'dist/commands/index.js']) expect(existsSync(join(dir, path)), path).toBe(true);
    const emitted = sourceFiles(join(dir, 'dist')).map((f) => relative(join(dir, 'dist'), f));
    expect(emitted.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(emitted.filter((f) => /^(lab|src\/lab|bench|test)\//.test(f))).toEqual([]);
    // rewriteRelativeImportExtensions: no relative import still names a .ts file.
    const tsSpecifiers = emitted.flatMap((f) => [...readFileSync(join(dir, 'dist', f), 'utf8').matchAll(/(?:from\s+|import\()\s*['"](\.{1,2}\/[^'"]+\.ts)['"]/g)].map((m) => `${f}: ${m[1]}`));
    expect(tsSpecifiers).toEqual([]);
  });

  it('runs `node dist/src/cli.js --version` and `--help` with plain node', async () => {
    expect((await node(['dist/src/cli.js', '--version'])).stdout.trim()).toBe(version);
    const { stdout } = await node(['dist/src/cli.js', '--help']);
    expect(stdout).toContain('Usage: maas-chatops <command>');
    expect(stdout).toMatch(/^ {2}serve\b/m);
    expect((await node(['dist/src/cli.js', 'fix-dns', '--help'])).stdout).toContain('Usage: maas-chatops fix-dns [options] <cluster>');
  });

  it('runs `maas-chatops sites --config FILE` against a config of its own', async () => {
    const config = join(dir, 'maas-chatops.yaml');
    writeFileSync(
      config,
      [
        'maas:',
        '  region-a: { url: "http://127.0.0.1:5240/MAAS", apiKey: "env:BUNDLE_TEST_MAAS_KEY" }',
        'sites:',
        '  site-b: { maas: region-a, machines: { zone: site-b } }',
        'clusters:',
        '  prod: { maas: region-a, kube: { namespace: capi } }',
        '',
      ].join('\n'),
    );
    const env = { ...process.env, BUNDLE_TEST_MAAS_KEY: 'aaaaaaaaaaaaaaaaaa:bbbbbbbbbbbbbbbbbb:cccccccccccccccccccccccccccccccc', NODE_ENV: 'production' };
    const { stdout } = await node(['dist/src/cli.js', 'sites', '--config', config, '--json'], env);
    const overview = JSON.parse(stdout) as { regions: { name: string }[]; sites: { name: string }[]; clusters: { name: string; namespace: string }[] };
    expect(overview.regions.map((r) => r.name)).toEqual(['region-a']);
    expect(overview.sites.map((s) => s.name)).toEqual(['site-b']);
    expect(overview.clusters).toEqual([expect.objectContaining({ name: 'prod', namespace: 'capi' })]);
    expect(stdout).not.toContain('cccccccccccccccccccccccccccccccc');
  });

  it('says the lab is not part of the build, exit 64', async () => {
    const failed = await node(['dist/src/cli.js', 'lab']).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(64);
    expect(failed?.stderr).toContain('the lab is not part of this installation');
  });

  it('bin/maas-chatops.js runs the compiled dist/ where there are no sources (an installed package)', async () => {
    cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
    expect(existsSync(join(dir, 'src'))).toBe(false);
    expect((await node(['bin/maas-chatops.js', '--version'])).stdout.trim()).toBe(version);
  });

  it('loads the process entry modules (main, adapters, health, metrics, dashboard) with plain node', async () => {
    const entries = ['dist/src/main.js', 'dist/src/adapters/real-adapters.js', 'dist/src/edge/http/health.js', 'dist/src/engine/metrics.js', 'dist/src/edge/http/queue-dashboard.js', 'dist/jobs/index.js', 'dist/commands/index.js'];
    for (const f of entries) expect(existsSync(join(dir, f)), f).toBe(true);
    const script = join(dir, 'load-entries.mjs');
    writeFileSync(
      script,
      [
        "import { pathToFileURL } from 'node:url';",
        'const failed = [];',
        'for (const f of process.argv.slice(2)) {',
        '  try { await import(pathToFileURL(f).href); } catch (err) { failed.push(`${f}: ${String(err?.message ?? err).split("\\n")[0]}`); }',
        '}',
        'process.stdout.write(JSON.stringify(failed));',
        'process.exit(0);',
      ].join('\n'),
    );
    const { stdout } = await node([script, ...entries.map((f) => join(dir, f))]);
    expect(JSON.parse(stdout)).toEqual([]);
  });

  // A package that is only a dependency of a dependency (say @slack/web-api through @slack/bolt)
  // passes here; it is installed, though not pinned by package.json.
  it('no compiled file imports, at run time, a package that a production install lacks', () => {
    const allowed = new Set([...productionPackages, ...builtinModules]);
    const offenders: string[] = [];
    for (const file of sourceFiles(join(dir, 'dist'))) {
      for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
        if (!allowed.has(packageOf(specifier))) offenders.push(`${relative(dir, file)}: ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the import scanner sees value imports and skips type-only ones', () => {
    const text = "import type { X } from 'vitest';\nimport { a } from 'zod';\nexport { b } from '@slack/bolt/dist/x.js';\nimport './local.ts';\nconst m = await import('pino');\n// import { c } from 'eslint';\n";
    expect(runtimeImports(text).map(packageOf)).toEqual(['zod', '@slack/bolt', 'pino']);
  });
});
