import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { copiesOf, execForm, last, parseDockerfile, type Stage } from '../helpers/dockerfile.ts';

const root = new URL('../../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const stages = parseDockerfile(dockerfile);
const stage = (name: string): Stage => {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name}`);
  return found;
};
const runtime = stages.at(-1) as Stage;
const envOf = (s: Stage) =>
  Object.fromEntries(
    s.instructions
      .filter((i) => i.keyword === 'ENV')
      .flatMap((i) => i.args.split(/\s+/))
      .map((pair) => pair.split('=') as [string, string]),
  );

/** The one image pulled from a registry; every other FROM names an earlier stage. */
const externalImages = stages.filter((s, i) => !stages.slice(0, i).some((earlier) => earlier.name === s.image)).map((s) => s.image);
const runs = (s: Stage) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
const buildConfig = JSON.parse(readFileSync(new URL('tsconfig.build.json', root), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[]; exclude: string[] };

describe('Dockerfile', () => {
  it('pulls one base image, a Node LTS release pinned by digest', () => {
    expect(externalImages).toHaveLength(1);
    const match = /^node:(\d+)\.(\d+)\.(\d+)-bookworm-slim@sha256:([0-9a-f]{64})$/.exec(externalImages[0] ?? '');
    expect(match, externalImages[0]).not.toBeNull();
    // Even majors become LTS; 26 is the Active LTS line.
    expect(Number(match?.[1]) % 2).toBe(0);
    expect(Number(match?.[1])).toBeGreaterThanOrEqual(26);
    expect(dockerfile).toMatch(new RegExp(`^# .*node:${match?.[1]}\\.${match?.[2]}\\.${match?.[3]}-bookworm-slim`, 'm'));
  });

  it('builds dist/ with tsc in a build stage, installs production dependencies in another, runs in a third', () => {
    expect(stages.map((s) => s.name)).toEqual(['base', 'build', 'deps', 'runtime']);
    expect(runs(stage('build')).some((r) => /\bnpm ci\b/.test(r) && !r.includes('--omit=dev'))).toBe(true);
    expect(runs(stage('build')).some((r) => /\btsc -p tsconfig\.build\.json\b/.test(r))).toBe(true);
    expect(runs(stage('deps')).some((r) => /\bnpm ci\b.*--omit=dev\b/.test(r) && /--omit=optional\b/.test(r))).toBe(true);
    expect(runs(runtime).some((r) => /\bnpm\b|\btsc\b/.test(r))).toBe(false);
  });

  it('ships production node_modules, package.json and dist/ only: no sources, no lab, no tests, no tsx', () => {
    const copies = copiesOf(runtime);
    const modules = copies.find((c) => c.sources.includes('/app/node_modules'));
    expect(modules?.from).toBe('deps');
    const shipped = copies.filter((c) => c.from === 'build').flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
    expect(shipped.sort()).toEqual(['dist', 'package.json']);
    expect(copies.every((c) => c.from !== null)).toBe(true);
    // What the build stage compiles: the production sources, never the lab, benchmarks or tests.
    const built = copiesOf(stage('build')).flatMap((c) => c.sources);
    for (const dir of ['lab', 'bench', 'test']) expect(built).not.toContain(dir);
    expect(buildConfig.include.sort()).toEqual(['commands', 'jobs', 'src']);
    expect(buildConfig.exclude).toEqual(expect.arrayContaining(['lab', 'bench', 'test']));
    // tsx is a dev dependency: `npm ci --omit=dev` leaves it out.
    expect(lock.packages['node_modules/tsx']?.dev).toBe(true);
  });

  it('runs as a non-root user, set before the entry point', () => {
    const user = last(runtime, 'USER');
    expect(user).toBeDefined();
    const name = (user?.args ?? '').split(':')[0];
    expect(['root', '0', '']).not.toContain(name);
    const entry = last(runtime, 'ENTRYPOINT');
    expect((user?.line ?? 0) < (entry?.line ?? 0)).toBe(true);
  });

  it('matches the uid the Kubernetes manifests run as (the node image user `node` is uid 1000)', () => {
    const user = (last(runtime, 'USER')?.args ?? '').split(':')[0];
    const uid = user === 'node' ? 1000 : Number(user);
    for (const file of ['bot.yaml', 'worker.yaml']) {
      const docs = parseAllDocuments(readFileSync(new URL(`deploy/${file}`, root), 'utf8')).map((d) => d.toJS() as { kind: string; spec?: { template?: { spec?: { securityContext?: { runAsUser?: number } } } } });
      const deployment = docs.find((d) => d.kind === 'Deployment');
      expect(deployment?.spec?.template?.spec?.securityContext?.runAsUser, file).toBe(uid);
    }
  });

  it('starts the compiled CLI with plain node under an init, serving by default', () => {
    const entry = execForm(last(runtime, 'ENTRYPOINT')?.args ?? '');
    expect(entry).not.toBeNull();
    expect(entry?.[2]).toBe('node');
    expect(entry?.at(-1)).toBe('dist/src/cli.js');
    expect(entry?.join(' ')).not.toMatch(/tsx|--import|--loader/);
    expect(entry?.[0]).toMatch(/tini$/);
    expect(execForm(last(runtime, 'CMD')?.args ?? '')).toEqual(['serve']);
  });

  it('checks its health on /healthz at the port it exposes', () => {
    const health = last(runtime, 'HEALTHCHECK');
    expect(health?.args).toMatch(/\bCMD\b/);
    expect(health?.args).toContain('/healthz');
    const env = envOf(runtime);
    expect(last(runtime, 'EXPOSE')?.args).toBe(env.PORT);
    expect(env.MAAS_CHATOPS_CONFIG).toBe('/etc/maas-chatops/maas-chatops.yaml');
  });

  it('keeps the host node_modules and .git out of the build context', () => {
    const ignored = readFileSync(new URL('.dockerignore', root), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.git']));
  });
});

describe('the Dockerfile parser', () => {
  it('joins continuation lines, skips comments and splits stages', () => {
    const parsed = parseDockerfile('# syntax=docker/dockerfile:1\nFROM a AS one\nRUN x \\\n  # note\n  && y\nFROM --platform=linux/amd64 b\nCMD ["z"]\n');
    expect(parsed).toEqual([
      { image: 'a', name: 'one', instructions: [{ keyword: 'RUN', args: 'x && y', line: 3 }] },
      { image: 'b', name: null, instructions: [{ keyword: 'CMD', args: '["z"]', line: 7 }] },
    ]);
    expect(execForm('node x')).toBeNull();
    expect(() => parseDockerfile('RUN x\n')).toThrow(/before the first FROM/);
  });
});
