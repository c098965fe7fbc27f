import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.ts';
import { readRuntimeEnv, requireSlackEnv } from '../../src/core/env.ts';
import { redisSettingsFrom } from '../../src/engine/queue/redis-settings.ts';
import { deployDir, renderKustomization, renderWithKubectl, type K8sObject } from '../helpers/kustomize.ts';

/*
 * What the cluster would run: deploy/ rendered as `kubectl apply -k` renders it (the base, and
 * the base with the Sentinel component), then each container that loads the config started on
 * paper: its environment as Kubernetes builds it, its files as its mounts lay them out.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML */
const DEPLOY = deployDir();
const VARIANTS = { base: [] as string[], sentinel: ['sentinel'] };
const SRC = join(DEPLOY, '../src');

/** Roles whose process loads the config; `worker` and `serve` run SSH and Kubernetes too. */
const CONFIG_ROLES = ['bot', 'worker', 'serve'];

const one = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found;
};

function configContainers(objects: K8sObject[]): { workload: string; role: string; pod: any; container: any }[] {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
    .flatMap((o) => (o.spec.template.spec.containers as any[]).map((container) => ({ workload: o.metadata.name, role: container.args?.[0] as string, pod: o.spec.template.spec, container })))
    .filter((c) => CONFIG_ROLES.includes(c.role));
}

/** The container's environment as Kubernetes builds it: envFrom first, then env in order, `$(VAR)` expanded from what came before. */
function containerEnv(objects: K8sObject[], container: any): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(env, one(objects, 'Secret', from.secretRef.name).stringData);
  for (const e of container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) env[e.name] = one(objects, 'Secret', ref.name).stringData[ref.key];
    else env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);
  }
  return env;
}

/** The files the container sees: every key of each mounted ConfigMap or Secret under its mount path. */
function containerFiles(objects: K8sObject[], pod: any, container: any): Map<string, string> {
  const files = new Map<string, string>();
  for (const mount of container.volumeMounts ?? []) {
    const volume = (pod.volumes ?? []).find((v: any) => v.name === mount.name);
    const source = volume?.configMap ? one(objects, 'ConfigMap', volume.configMap.name).data : volume?.secret ? one(objects, 'Secret', volume.secret.secretName).stringData : {};
    for (const [key, value] of Object.entries(source ?? {})) files.set(`${mount.mountPath}/${key}`, String(value));
  }
  return files;
}

function readerOf(files: Map<string, string>, where: string) {
  return (path: string) => {
    const text = files.get(path);
    if (text === undefined) throw Object.assign(new Error(`${where}: ${path} is not mounted`), { code: 'ENOENT' });
    return text;
  };
}

/** Every environment variable the code reads (`env.NAME`, `raw.NAME`, `process.env.NAME` in src/). */
function envNamesReadByCode(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(SRC, { recursive: true }) as string[]) {
    if (!file.endsWith('.ts')) continue;
    for (const m of readFileSync(join(SRC, file), 'utf8').matchAll(/\b(?:env|raw)\.([A-Z][A-Z0-9_]{2,})\b/g)) names.add(m[1] as string);
  }
  return names;
}

/** Node reads these itself. */
const READ_BY_NODE = new Set(['NODE_OPTIONS']);

describe.each(Object.entries(VARIANTS))('deploy/ rendered (%s)', (_variant, components) => {
  const objects = renderKustomization(DEPLOY, components);

  it('renders as kubectl kustomize renders it (when kubectl is installed)', () => {
    const real = renderWithKubectl(DEPLOY, components);
    if (!real) return; // the renderer alone then: it is held to kubectl's output wherever kubectl is there
    const key = (o: K8sObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const byKey = (list: K8sObject[]) => Object.fromEntries(list.map((o) => [key(o), o]));
    expect(byKey(objects)).toEqual(byKey(real));
  });

  it('has the bot and the worker, each loading the config', () => {
    expect(configContainers(objects).map((c) => `${c.workload}:${c.role}`).sort()).toEqual(['maas-chatops-bot:bot', 'maas-chatops-worker:worker']);
  });

  it.each(['bot', 'worker'])('starts the %s container on paper: its config loads from its mounts, and every file: secret it uses is mounted', (role) => {
    const containers = configContainers(objects).filter((x) => x.role === role);
    expect(containers).toHaveLength(1);
    for (const c of containers) {
      const env = containerEnv(objects, c.container);
      const files = containerFiles(objects, c.pod, c.container);
      const loaded = loadConfig({ env, readFile: readerOf(files, c.workload) });
      expect(loaded.deferred.length, 'the shipped config names file: secrets').toBeGreaterThan(0);
      if (role === 'bot') continue; // the bot never opens SSH or reads a kubeconfig: it needs none of them
      for (const { where, secret } of loaded.deferred) expect(() => secret.reveal(), `${c.workload}: ${where} (${secret.source})`).not.toThrow();
    }
  });

  it('gives each container the environment its role needs, and sets nothing the code does not read', () => {
    const read = envNamesReadByCode();
    const configText = one(objects, 'ConfigMap', 'maas-chatops-config').data['maas-chatops.yaml'] as string;
    const referenced = new Set([...configText.matchAll(/\benv:([A-Z0-9_]+)/g)].map((m) => m[1] as string));
    for (const c of configContainers(objects)) {
      const env = containerEnv(objects, c.container);
      for (const name of Object.keys(env)) {
        expect(read.has(name) || referenced.has(name) || READ_BY_NODE.has(name), `${c.workload} sets ${name}, which nothing reads`).toBe(true);
      }
      for (const name of referenced) expect(env, `${c.workload}: the config's env:${name}`).toHaveProperty(name);
      for (const [name, value] of Object.entries(env)) expect(value, `${c.workload} ${name}`).not.toMatch(/\$\(/);
      const runtime = readRuntimeEnv(env);
      if (c.role !== 'worker') expect(() => requireSlackEnv(runtime)).not.toThrow();
      const { config } = loadConfig({ env, readFile: readerOf(containerFiles(objects, c.pod, c.container), c.workload) });
      const { settings } = redisSettingsFrom(env, config.redis);
      if (components.includes('sentinel')) expect(settings).toMatchObject({ mode: 'sentinel', username: 'maas-chatops' });
      else {
        expect(settings).toMatchObject({ mode: 'url' });
        const host = new URL((settings as { url: string }).url).hostname;
        expect(one(objects, 'Service', host).metadata.namespace).toBe(one(objects, 'Deployment', c.workload).metadata.namespace);
      }
    }
  });
});
