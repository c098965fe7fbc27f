import { stringify } from 'yaml';

/**
 * A kubeconfig (YAML text) that points client-node at a simulator with its bearer token.
 * client-node 2.x refuses an http:// server unless insecure-skip-tls-verify is set.
 */
export function kubeconfigFor(
  sim: { url: string; token: string },
  options: { context?: string; namespace?: string; token?: string } = {},
): string {
  const name = options.context ?? 'kube-sim';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: sim.url, 'insecure-skip-tls-verify': sim.url.startsWith('http:') } }],
    users: [{ name, user: { token: options.token ?? sim.token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? 'default' } }],
    'current-context': name,
  });
}
