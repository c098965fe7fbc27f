import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterConfig } from '../../core/config.ts';
import { ChatopsError } from '../../core/errors.ts';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeConfigSources {
  env?: NodeJS.ProcessEnv;
  home?: string;
  inCluster?: boolean;
}

/**
 * docs/configuration.md: the cluster's kubeconfig secret, else KUBECONFIG (or ~/.kube/config),
 * else the in-cluster service account; `context` picks a context. Never falls back to
 * client-node's http://localhost:8080 default, and never puts kubeconfig text in a message.
 */
export function loadKubeConfig(cluster: ClusterConfig, sources: KubeConfigSources = {}): KubeConfig {
  const kc = new KubeConfig();
  const where = `clusters.${cluster.name}.kube`;
  if (cluster.kube.kubeconfig) {
    loadOrExplain(() => kc.loadFromString(cluster.kube.kubeconfig?.reveal() ?? ''), `${where}.kubeconfig (${cluster.kube.kubeconfig.source})`);
  } else if (hasDefaultKubeconfig(sources)) {
    loadOrExplain(() => kc.loadFromDefault(), 'KUBECONFIG / ~/.kube/config');
  } else if (sources.inCluster ?? existsSync(SERVICE_ACCOUNT_TOKEN)) {
    loadOrExplain(() => kc.loadFromCluster(), 'the in-cluster service account');
  } else {
    throw new ChatopsError('KUBE_FAILED', `no kubeconfig for cluster "${cluster.name}"`, {
      hint: `Set ${where}.kubeconfig (file:/path or env:NAME), export KUBECONFIG, or run the bot inside the management cluster`,
    });
  }
  if (cluster.kube.context) selectContext(kc, cluster.kube.context, where);
  if (!kc.getCurrentCluster()) {
    throw new ChatopsError('KUBE_FAILED', `the kubeconfig for cluster "${cluster.name}" names no cluster for its current context`, {
      hint: `Set ${where}.context to one of: ${contextNames(kc) || '(none)'}`,
    });
  }
  return kc;
}

function hasDefaultKubeconfig(sources: KubeConfigSources): boolean {
  const env = sources.env ?? process.env;
  if (env.KUBECONFIG) return true;
  return existsSync(join(sources.home ?? homedir(), '.kube', 'config'));
}

function selectContext(kc: KubeConfig, context: string, where: string): void {
  if (!kc.getContextObject(context)) {
    throw new ChatopsError('KUBE_FAILED', `${where}.context: no context "${context}" in the kubeconfig`, {
      hint: `Known contexts: ${contextNames(kc) || '(none)'}`,
    });
  }
  kc.setCurrentContext(context);
}

function contextNames(kc: KubeConfig): string {
  return kc.getContexts().map((c) => c.name).join(', ');
}

/** The parser's own message may quote the offending line (a token, a key): keep only its position. */
function loadOrExplain(load: () => void, source: string): void {
  try {
    load();
  } catch (err) {
    const fsCode = (err as NodeJS.ErrnoException).code;
    if (typeof fsCode === 'string' && fsCode.startsWith('E')) {
      throw new ChatopsError('KUBE_FAILED', `cannot read the kubeconfig from ${source} (${fsCode})`, {
        hint: 'Check the path in KUBECONFIG and its permissions',
      });
    }
    const line = (err as { mark?: { line?: number } }).mark?.line;
    const position = typeof line === 'number' ? ` (YAML error at line ${line + 1})` : '';
    throw new ChatopsError('KUBE_FAILED', `cannot use the kubeconfig from ${source}: not a valid kubeconfig${position}`, {
      hint: 'Check that it is a kubeconfig file (apiVersion: v1, kind: Config) with clusters, users and contexts',
    });
  }
}
