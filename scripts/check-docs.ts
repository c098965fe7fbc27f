/**
 * `npm run docs:checks`: writes what the registry cannot derive at run time into the files people
 * and Slack read: the Slack manifest's usage hint, a README Commands row for each check and repair,
 * and a docs/findings.md section (anchor, heading, the lines to write) for each finding code a check
 * emits. Existing rows and sections are kept as written; only what is missing is added.
 * `npm run docs:checks -- --check` changes nothing and exits 1 naming each file that is behind.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkUsage, fixUsage } from '../src/features/check-spec.ts';
import { BUILT_IN_COMMANDS, CHECKS, FIX_COMMANDS } from '../src/features/registry.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A check or repair as the docs name it. */
export interface DocCommand {
  name: string;
  /** `dns-check <cluster>|all`, `fix-dns <cluster>`. */
  usage: string;
  kind: 'check' | 'fix';
  /** What it does, for a new README row. */
  summary: string;
}

/** The finding codes a check's folder emits, for docs/findings.md. */
export interface CheckCodes {
  /** The check's name, or undefined for shared code (src/features/<folder> without a check, jobs/). */
  check: string | undefined;
  codes: string[];
}

/** Marks a line still to be written: test/unit/deploy-docs.test.ts fails while one is left. */
export const TO_WRITE = '_(to write:';

export function registryCommands(): DocCommand[] {
  return [
    ...CHECKS.map((c): DocCommand => ({ name: c.name, usage: checkUsage(c), kind: 'check', summary: c.summary })),
    ...FIX_COMMANDS.map(({ fix, targetKind }): DocCommand => ({ name: fix.name, usage: fixUsage(fix, targetKind), kind: 'fix', summary: `plan (and, approved, run) ${fix.plans}` })),
  ];
}

/** help and sites, every check and repair with its usage, then the other built-in commands. */
export function usageHint(commands: readonly DocCommand[]): string {
  const [first, second, ...rest] = BUILT_IN_COMMANDS;
  return [first, second, ...commands.map((c) => c.usage), ...rest].join(' | ');
}

export function withUsageHint(manifest: string, hint: string): string {
  const line = /^(\s*usage_hint: )"[^"\n]*"$/m;
  if (!line.test(manifest)) throw new Error('manifest.yml has no usage_hint line under slash_commands');
  return manifest.replace(line, (_m, head: string) => `${head}"${hint}"`);
}

const escapePipes = (s: string) => s.replace(/\|/g, '\\|');

export function readmeRow(c: DocCommand): string {
  const terminal = c.kind === 'check' ? `maas-chatops ${c.usage} [--json]` : `maas-chatops ${c.usage} [--apply]`;
  return `| \`/maas ${escapePipes(c.usage)}\` | \`${escapePipes(terminal)}\` | ${escapePipes(c.summary)} |`;
}

/** The README with a Commands row for every check and repair: a missing one goes after the last row of its kind. */
export function withReadmeRows(readme: string, commands: readonly DocCommand[]): string {
  const start = readme.indexOf('## Commands');
  if (start < 0) throw new Error('README.md has no "## Commands" section');
  const end = readme.indexOf('\n## ', start + 1);
  const head = readme.slice(0, start);
  const tail = end < 0 ? '' : readme.slice(end);
  const lines = readme.slice(start, end < 0 ? undefined : end).split('\n');
  const rowOf = (c: DocCommand) => lines.findIndex((l) => l.startsWith(`| \`/maas ${escapePipes(c.usage)}\` |`));
  for (const c of commands) {
    if (rowOf(c) >= 0) continue;
    const sameKind = commands.filter((o) => o.kind === c.kind).map(rowOf).filter((i) => i >= 0);
    const after = sameKind.length ? Math.max(...sameKind) : lastTableRow(lines);
    lines.splice(after + 1, 0, readmeRow(c));
  }
  return head + lines.join('\n') + tail;
}

function lastTableRow(lines: readonly string[]): number {
  const header = lines.findIndex((l) => /^\| --- \|/.test(l));
  if (header < 0) throw new Error('README.md "## Commands" has no table');
  let i = header;
  while (lines[i + 1]?.startsWith('|')) i++;
  return i;
}

export function findingStub(code: string, check: string | undefined): string {
  const from = check ? `${check}` : 'a shared part';
  return [
    `<a id="${code.toLowerCase()}"></a>`,
    `### ${code}`,
    '',
    `- **Means**: ${TO_WRITE} what ${code}, from ${from}, says is wrong, and its severity)_`,
    `- **What to do**: ${TO_WRITE} the step or the \`/maas\` command that fixes it)_`,
    '',
  ].join('\n');
}

const anchorOf = (code: string) => `<a id="${code.toLowerCase()}"></a>`;

/**
 * docs/findings.md with a section for every code: a missing one goes after the last documented code
 * of its check; a check with none documented gets its own `## <check>` section before "## Any check";
 * shared codes go at the end.
 */
export function withFindingSections(doc: string, groups: readonly CheckCodes[]): string {
  let out = doc;
  for (const { check, codes } of groups) {
    const missing = codes.filter((c) => !out.includes(anchorOf(c)));
    if (!missing.length) continue;
    const stubs = missing.map((c) => findingStub(c, check)).join('\n');
    const documented = codes.filter((c) => out.includes(anchorOf(c)));
    if (documented.length) {
      const last = Math.max(...documented.map((c) => out.indexOf(anchorOf(c))));
      const next = out.indexOf('\n## ', last);
      const at = next < 0 ? out.length : next + 1;
      out = `${out.slice(0, at).replace(/\n*$/, '\n\n')}${stubs}\n${out.slice(at)}`;
    } else if (check) {
      const any = out.indexOf('\n## Any check');
      const at = any < 0 ? out.length : any + 1;
      out = `${out.slice(0, at).replace(/\n*$/, '\n\n')}## ${check}\n\n${stubs}\n${out.slice(at)}`;
    } else {
      out = `${out.replace(/\n*$/, '\n\n')}${stubs}`;
    }
  }
  return out;
}

/** `code: 'X'` in the TypeScript files under a directory: the codes the findings there carry. */
export function codesIn(dir: string): string[] {
  const codes = new Set<string>();
  for (const file of readdirSync(dir, { recursive: true }) as string[]) {
    if (!file.endsWith('.ts')) continue;
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/\bcode:\s*'([A-Z][A-Z0-9_]+)'/g)) codes.add(m[1] as string);
  }
  return [...codes].sort();
}

/** Each folder of src/features with the check its index.ts exports (if any), then jobs/. */
export async function registryCodes(root = ROOT): Promise<CheckCodes[]> {
  const features = join(root, 'src/features');
  const groups: CheckCodes[] = [];
  for (const entry of readdirSync(features, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(features, entry.name);
    const exported = (await import(pathToFileURL(join(dir, 'index.ts')).href).catch(() => ({}))) as Record<string, unknown>;
    const check = CHECKS.find((c) => Object.values(exported).includes(c));
    groups.push({ check: check?.name, codes: codesIn(dir) });
  }
  groups.push({ check: undefined, codes: codesIn(join(root, 'jobs')) });
  // A code a check's folder emits belongs to that check even when a shared folder emits it too.
  const ofChecks = new Set(groups.filter((g) => g.check).flatMap((g) => g.codes));
  return groups.map((g) => (g.check ? g : { ...g, codes: g.codes.filter((c) => !ofChecks.has(c)) }));
}

export interface GeneratedFile {
  path: string;
  before: string;
  after: string;
}

/** What the three files would be: each as it is and as generated. */
export async function generate(root = ROOT): Promise<GeneratedFile[]> {
  const commands = registryCommands();
  const read = (p: string) => readFileSync(join(root, p), 'utf8');
  const manifest = read('manifest.yml');
  const readme = read('README.md');
  const findings = read('docs/findings.md');
  return [
    { path: 'manifest.yml', before: manifest, after: withUsageHint(manifest, usageHint(commands)) },
    { path: 'README.md', before: readme, after: withReadmeRows(readme, commands) },
    { path: 'docs/findings.md', before: findings, after: withFindingSections(findings, await registryCodes(root)) },
  ];
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const behind = (await generate()).filter((f) => f.before !== f.after);
  for (const f of behind) {
    if (check) {
      console.error(`${f.path} is behind the check registry: run npm run docs:checks`);
    } else {
      writeFileSync(join(ROOT, f.path), f.after);
      console.log(`wrote ${relative(process.cwd(), join(ROOT, f.path)) || f.path}`);
    }
  }
  const stubs = behind.filter((f) => f.path === 'docs/findings.md' && f.after.includes(TO_WRITE));
  if (!check && stubs.length) console.log(`docs/findings.md: write each line marked "${TO_WRITE} …)_" (the tests fail while one is left)`);
  if (!behind.length) console.log('manifest.yml, README.md and docs/findings.md already name every check, repair and finding code');
  return check && behind.length ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}
