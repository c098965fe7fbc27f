/**
 * Variants of the lab world's config for load tests and benchmarks: more command channels,
 * many sites and clusters that alias the lab's two (so that many distinct checks exist while
 * the same simulators answer), a second MAAS region. Written to a file the bot and worker
 * processes read with `--config`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { LabWorld } from '../../lab/lab-world.ts';

export interface ConfigDoc {
  slack: Record<string, unknown>;
  maas: Record<string, { url: string; apiKey: string }>;
  sites: Record<string, Record<string, unknown>>;
  clusters: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface WrittenConfig {
  path: string;
  text: string;
  remove(): void;
}

/** The lab's config, changed by `mutate`, in a fresh private file. */
export function writeLabConfigVariant(world: LabWorld, mutate: (doc: ConfigDoc) => void): WrittenConfig {
  const doc = parse(world.configText) as ConfigDoc;
  mutate(doc);
  const text = stringify(doc);
  const dir = mkdtempSync(join(tmpdir(), 'maas-chatops-load-'));
  const path = join(dir, 'maas-chatops.yaml');
  writeFileSync(path, text, { mode: 0o600 });
  return { path, text, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Sites named `names` that check the same machines, VM hosts and rack as `from`. */
export function aliasSites(doc: ConfigDoc, from: string, names: string[], overrides: Record<string, unknown> = {}): void {
  const site = doc.sites[from];
  if (!site) throw new Error(`the lab config has no site ${from}`);
  for (const name of names) doc.sites[name] = { ...structuredClone(site), ...overrides };
}

/** Clusters named `names` that read the same MaasCluster (and MAAS record) as `from`. */
export function aliasClusters(doc: ConfigDoc, from: string, names: string[]): void {
  const cluster = doc.clusters[from];
  if (!cluster) throw new Error(`the lab config has no cluster ${from}`);
  for (const name of names) doc.clusters[name] = { ...structuredClone(cluster), maasCluster: (cluster.maasCluster as string | undefined) ?? from };
}

/** `prefix-1` … `prefix-n`. */
export function numbered(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
}
