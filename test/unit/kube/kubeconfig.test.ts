import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../../src/core/config.ts';
import { ChatopsError } from '../../../src/core/errors.ts';
import { loadKubeConfig } from '../../../src/adapters/kube/kubeconfig.ts';
import { kubeconfigFor } from '../../../lab/kube-sim/kubeconfig.ts';
import { Secret } from '../../../src/core/secret.ts';

const cluster = (kube: Partial<ClusterConfig['kube']> = {}): ClusterConfig => ({
  name: 'prod',
  maas: 'region-a',
  kube: { namespace: 'default', ...kube },
  maasCluster: 'prod',
  controller: { namespace: 'capmaas-system', deployment: 'capmaas-controller-manager' },
});

const dirs: string[] = [];
const savedKubeconfig = process.env.KUBECONFIG;
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
});

function emptyHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubecfg-'));
  dirs.push(dir);
  return dir;
}

function failure(fn: () => unknown): ChatopsError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ChatopsError);
    return err as ChatopsError;
  }
  throw new Error('expected a ChatopsError');
}

describe('loadKubeConfig', () => {
  it('loads the cluster’s kubeconfig secret and its current context', () => {
    const text = kubeconfigFor({ url: 'http://127.0.0.1:6443', token: 't0k3n-abcdef' }, { context: 'mgmt' });
    const kc = loadKubeConfig(cluster({ kubeconfig: new Secret(text, 'env:KC') }), { env: {}, home: emptyHome(), inCluster: false });
    expect(kc.getCurrentContext()).toBe('mgmt');
    expect(kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:6443');
  });

  it('says how to provide one when there is none, instead of falling back to localhost:8080', () => {
    delete process.env.KUBECONFIG;
    const err = failure(() => loadKubeConfig(cluster(), { env: {}, home: emptyHome(), inCluster: false }));
    expect(err.message).toBe('no kubeconfig for cluster "prod"');
    expect(err.hint).toContain('clusters.prod.kube.kubeconfig');
  });

  it('falls back to KUBECONFIG', () => {
    const dir = emptyHome();
    const file = join(dir, 'config');
    writeFileSync(file, kubeconfigFor({ url: 'http://127.0.0.1:7443', token: 'abcdefgh' }));
    process.env.KUBECONFIG = file;
    const kc = loadKubeConfig(cluster(), { env: process.env, home: emptyHome(), inCluster: false });
    expect(kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:7443');
  });

  it('names a KUBECONFIG file it cannot read by its error code only', () => {
    process.env.KUBECONFIG = join(emptyHome(), 'absent');
    const err = failure(() => loadKubeConfig(cluster(), { env: process.env, home: emptyHome(), inCluster: false }));
    expect(err.message).toBe('cannot read the kubeconfig from KUBECONFIG / ~/.kube/config (ENOENT)');
  });

  it('refuses a kubeconfig without a cluster for its context', () => {
    const err = failure(() => loadKubeConfig(cluster({ kubeconfig: new Secret('hello', 'literal') }), { env: {}, home: emptyHome() }));
    expect(err.message).toBe('the kubeconfig for cluster "prod" names no cluster for its current context');
  });
});
