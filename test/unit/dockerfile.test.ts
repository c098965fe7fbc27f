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

describe('Dockerfile', () => {
  it('builds in three Node 20 stages: build (all deps, typecheck), deps (production deps), runtime', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    for (const s of stages) expect(s.image).toMatch(/^node:20(\.|-|$)/);
    const runs = (s: Stage) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs(stage('build')).some((r) => /\bnpm ci\b/.test(r) && !r.includes('--omit=dev'))).toBe(true);
    expect(runs(stage('build')).some((r) => /tsc --noEmit/.test(r))).toBe(true);
    expect(runs(stage('deps')).some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true);
  });

  it('ships production node_modules only, and the sources the entry point loads', () => {
    const copies = copiesOf(runtime);
    const modules = copies.find((c) => c.sources.includes('/app/node_modules'));
    expect(modules?.from).toBe('deps');
    const shipped = copies.filter((c) => c.from === 'build').flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
    expect(shipped).toEqual(expect.arrayContaining(['package.json', 'bin', 'src', 'jobs', 'commands']));
    expect(shipped).not.toContain('test');
    expect(shipped).not.toContain('node_modules');
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

  it('starts bin/maas-chatops.js under an init, serving by default', () => {
    const entry = execForm(last(runtime, 'ENTRYPOINT')?.args ?? '');
    expect(entry).not.toBeNull();
    expect(entry?.slice(-2)).toEqual(['node', 'bin/maas-chatops.js']);
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
