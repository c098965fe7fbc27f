import { existsSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { deployDir, renderKustomization, type K8sObject } from '../helpers/kustomize.ts';

/*
 * docs/operations.md's install steps, walked on paper in the order they are written, as an
 * operator at the repository root would type them: each `cd` moves (a `( … )` subshell does not),
 * each path must exist from where the reader stands, a namespace must be created before anything
 * goes into it, the Secrets created must be the ones the manifests use with the keys the config
 * names, and a step that runs something in a Deployment needs that Deployment applied before it.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML */
const DEPLOY = deployDir();
const ROOT = normalize(join(DEPLOY, '..'));
const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');

/** The first shell block of the page (the install), one command a line, comments and continuations folded. */
function installCommands(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(operations)?.[1] ?? '';
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

interface Paper {
  cwd: string;
  namespaces: Set<string>;
  applied: K8sObject[];
  /** Secret name → the keys created in it. */
  secrets: Map<string, Set<string>>;
  problems: string[];
}

function readObjects(path: string): K8sObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJS() as K8sObject);
}

/** Step 5 has the reader take secret.yaml (placeholders) out of the kustomization before applying it. */
const SECRET_YAML_REMOVED = operations.includes('Remove `- secret.yaml` from deploy/kustomization.yaml');
const placeholders = new Set(readObjects(join(DEPLOY, 'secret.yaml')).map((o) => `${o.kind}/${o.metadata.name}`));

function flag(words: string[], name: string): string | undefined {
  const i = words.indexOf(name);
  return i >= 0 ? words[i + 1] : undefined;
}

function fromFiles(words: string[]): string[] {
  return words.flatMap((w, i) => (w === '--from-file' ? [words[i + 1] as string] : w.startsWith('--from-file=') ? [w.slice('--from-file='.length)] : []));
}

function kubectl(words: string[], p: Paper): void {
  const ns = flag(words, '-n');
  if (ns && !p.namespaces.has(ns)) p.problems.push(`${words.join(' ')}: namespace ${ns} does not exist yet`);
  const verb = words[ns ? 3 : 1];
  if (verb === 'apply') {
    const file = flag(words, '-f');
    const dir = flag(words, '-k');
    const path = join(p.cwd, (file ?? dir) as string);
    if (!existsSync(path)) return void p.problems.push(`${words.join(' ')}: no ${path} from ${p.cwd}`);
    const objects = file ? readObjects(path) : renderKustomization(path).filter((o) => !(SECRET_YAML_REMOVED && placeholders.has(`${o.kind}/${o.metadata.name}`)));
    for (const o of objects) {
      if (o.kind === 'Namespace') p.namespaces.add(o.metadata.name);
      else if (o.metadata.namespace && !p.namespaces.has(o.metadata.namespace)) p.problems.push(`${o.kind} ${o.metadata.name}: namespace ${o.metadata.namespace} does not exist yet`);
      if (o.kind === 'Secret' && p.secrets.has(o.metadata.name)) p.problems.push(`${o.kind} ${o.metadata.name}: applying it replaces the Secret created earlier`);
    }
    p.applied.push(...objects);
  } else if (verb === 'create' && words.includes('secret')) {
    const name = words[words.indexOf('generic') + 1] as string;
    const keys = new Set(fromFiles(words).map((f) => f.split('=')[0] as string));
    p.secrets.set(name, keys);
  } else if (verb === 'exec' || verb === 'rollout') {
    const target = words.find((w) => w.startsWith('deploy/'))?.slice('deploy/'.length);
    if (!p.applied.some((o) => o.kind === 'Deployment' && o.metadata.name === target && o.metadata.namespace === ns)) p.problems.push(`${words.join(' ')}: no Deployment ${target} in ${ns} applied yet`);
  }
}

/** One command line; `a && b` in order, `( … )` in a subshell whose cd does not last. */
function walk(line: string, p: Paper): void {
  const sub = /^\((.*)\)$/.exec(line);
  if (sub) {
    const inner = { ...p, cwd: p.cwd };
    for (const part of (sub[1] as string).split('&&')) walk(part.trim(), inner);
    return;
  }
  for (const part of line.split('&&').map((x) => x.trim())) {
    const words = part.split(/\s+/);
    if (words[0] === 'cd') {
      const to = join(p.cwd, words[1] as string);
      if (!existsSync(to)) p.problems.push(`cd ${words[1]}: no ${to}`);
      p.cwd = to;
    } else if (words[0] === 'kubectl') kubectl(words, p);
  }
}

describe('docs/operations.md install steps, in order', () => {
  const commands = installCommands();
  // The management cluster's own: the Cluster API MAAS provider runs there before maas-chatops comes.
  const paper: Paper = { cwd: ROOT, namespaces: new Set(['capmaas-system']), applied: [], secrets: new Map(), problems: [] };
  for (const line of commands) walk(line, paper);

  it('walk from the repository root without a step that fails', () => {
    expect(commands.length).toBeGreaterThanOrEqual(6);
    expect(paper.problems).toEqual([]);
  });

  it('create the Secrets the manifests use, with a key for every file:/secrets path the shipped config names', () => {
    const configText = paper.applied.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'maas-chatops-config')?.data['maas-chatops.yaml'] as string;
    const mounted = paper.applied.flatMap((o) => (o.kind === 'Deployment' ? (o.spec.template.spec.volumes as any[]) : [])).flatMap((v) => (v.secret ? [v.secret.secretName as string] : []));
    const fromEnv = paper.applied.flatMap((o) => (o.kind === 'Deployment' ? (o.spec.template.spec.containers as any[]) : [])).flatMap((c) => (c.envFrom ?? []).map((e: any) => e.secretRef.name as string));
    for (const name of new Set([...mounted, ...fromEnv])) expect([...paper.secrets.keys()], `the manifests use Secret ${name}`).toContain(name);
    const files = [...configText.matchAll(/file:\/secrets\/([A-Za-z0-9._-]+)/g)].map((m) => m[1] as string);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect([...(paper.secrets.get('maas-chatops-ssh') ?? [])], `file:/secrets/${file}`).toContain(file);
  });

  it('end by checking the config inside a worker, after it is applied', () => {
    expect(commands.at(-1)).toMatch(/^kubectl -n maas-chatops exec deploy\/maas-chatops-worker -- node dist\/src\/cli\.js config check$/);
  });
});
