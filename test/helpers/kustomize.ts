import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/*
 * A small renderer of deploy/'s kustomization, for the tests on machines without kustomize: the
 * parts deploy/ uses and nothing more. `resources` (files and directories), `components`,
 * `patches` (a file or an inline strategic-merge patch, matched by kind, name and namespace),
 * `$patch: delete` of an object or of a list element, and `images` (newName, newTag). Lists of
 * objects merge by `name`, as Kubernetes' strategic merge does for containers, env, ports,
 * volumes and volumeMounts (https://kubectl.docs.kubernetes.io/references/kustomize/glossary/#patchstrategicmerge).
 * renderWithKubectl runs the real one (`kubectl kustomize`) so a test can hold the two together.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML */
export type K8sObject = Record<string, any> & { kind: string; apiVersion: string; metadata: { name: string; namespace?: string } };

interface Kustomization {
  kind?: string;
  resources?: string[];
  components?: string[];
  patches?: ({ path: string } | { patch: string })[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

function readDocs(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((d): d is K8sObject => d !== null);
}

function readKustomization(dir: string): Kustomization {
  return parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

/** Renders `dir`'s kustomization, with `components` added to (or instead of) the ones it names. */
export function renderKustomization(dir: string, extraComponents: string[] = []): K8sObject[] {
  const k = readKustomization(dir);
  let objects: K8sObject[] = [];
  for (const resource of k.resources ?? []) {
    const path = join(dir, resource);
    objects.push(...(resource.endsWith('.yaml') ? readDocs(path) : renderKustomization(path)));
  }
  objects = applyPatches(objects, dir, k.patches ?? []);
  for (const component of [...(k.components ?? []), ...extraComponents]) {
    const cdir = join(dir, component);
    const c = readKustomization(cdir);
    if (c.kind !== 'Component') throw new Error(`${cdir}: not a kustomize Component`);
    objects = applyPatches(objects, cdir, c.patches ?? []);
  }
  return objects.map((o) => setImages(o, k.images ?? []));
}

function applyPatches(objects: K8sObject[], dir: string, patches: NonNullable<Kustomization['patches']>): K8sObject[] {
  let out = objects;
  for (const p of patches) {
    const docs = 'path' in p ? readDocs(join(dir, p.path)) : [parse(p.patch) as K8sObject];
    for (const patch of docs) {
      const matches = (o: K8sObject) => o.kind === patch.kind && o.metadata.name === patch.metadata.name && (o.metadata.namespace ?? '') === (patch.metadata.namespace ?? '');
      if (!out.some(matches)) throw new Error(`patch for ${patch.kind} ${patch.metadata.name}: no such object`);
      out = patch.$patch === 'delete' ? out.filter((o) => !matches(o)) : out.map((o) => (matches(o) ? (merge(o, patch) as K8sObject) : o));
    }
  }
  return out;
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A strategic merge: maps recursively, lists of named objects by name, anything else replaced. */
function merge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(patch) && Array.isArray(base) && patch.every((e) => isObject(e) && typeof e.name === 'string')) {
    // Elements the base does not have come first, in the patch's order, as kubectl's merge puts them.
    let out = [...base];
    const added: unknown[] = [];
    for (const element of patch as Record<string, any>[]) {
      const at = out.findIndex((e) => isObject(e) && e.name === element.name);
      if (element.$patch === 'delete') out = out.filter((_e, i) => i !== at);
      else if (at === -1) added.push(element);
      else out[at] = merge(out[at], element);
    }
    return [...added, ...out];
  }
  if (isObject(base) && isObject(patch)) {
    const out: Record<string, any> = { ...base };
    for (const [key, value] of Object.entries(patch)) out[key] = key in base ? merge(base[key], value) : value;
    return out;
  }
  return patch;
}

function setImages(o: K8sObject, images: NonNullable<Kustomization['images']>): K8sObject {
  const containers = o.spec?.template?.spec?.containers as { image?: string }[] | undefined;
  if (!containers || !images.length) return o;
  for (const c of containers) {
    const [name] = (c.image ?? '').split(':');
    const rule = images.find((i) => i.name === name);
    if (rule) c.image = `${rule.newName ?? name}:${rule.newTag ?? (c.image ?? '').split(':')[1] ?? 'latest'}`;
  }
  return o;
}

/** `kubectl kustomize` of a copy of `dir` with `components` switched on; undefined when kubectl (with kustomize) is not installed. */
export function renderWithKubectl(dir: string, components: string[] = []): K8sObject[] | undefined {
  if (spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status !== 0) return undefined;
  const work = mkdtempSync(join(tmpdir(), 'kustomize-'));
  try {
    cpSync(dir, join(work, 'base'), { recursive: true });
    const overlay = join(work, 'overlay');
    mkdirSync(overlay);
    const lines = ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources: [../base]', `components: [${components.map((c) => join('../base', c)).join(', ')}]`];
    writeFileSync(join(overlay, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    const run = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8', timeout: 60_000 });
    if (run.status !== 0) throw new Error(`kubectl kustomize failed: ${run.stderr}`);
    return parseAllDocuments(run.stdout).map((d) => d.toJS() as K8sObject);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function deployDir(): string {
  return join(dirname(new URL(import.meta.url).pathname), '../../deploy');
}
