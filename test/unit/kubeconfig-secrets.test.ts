import { describe, expect, it } from 'vitest';
import { kubeconfigSecretValues } from '../../src/core/kubeconfig-secrets.ts';
import { kubeconfigFor } from '../../lab/kube-sim/kubeconfig.ts';

describe('kubeconfigSecretValues', () => {
  it('returns the token, not the words around it', () => {
    const values = kubeconfigSecretValues(kubeconfigFor({ url: 'http://127.0.0.1:6443', token: 'abc123-token-value' }));
    expect(values).toEqual(['abc123-token-value']);
  });

  it('collects passwords, client keys, auth-provider tokens and exec env values', () => {
    const text = `
apiVersion: v1
kind: Config
users:
  - name: a
    user: { username: admin, password: p4ssw0rd!, client-key-data: LS0tLS1CRUdJTiBQUklWQVRF, client-certificate-data: LS0tQ0VSVA== }
  - name: b
    user:
      auth-provider: { name: oidc, config: { id-token: eyJhbGciOi, refresh-token: r3fr3sh, client-id: chatops } }
  - name: c
    user:
      exec: { command: get-token, env: [ { name: API_KEY, value: s3cr3t-env } ] }
`;
    expect(kubeconfigSecretValues(text)).toEqual(['p4ssw0rd!', 'LS0tLS1CRUdJTiBQUklWQVRF', 'eyJhbGciOi', 'r3fr3sh', 's3cr3t-env']);
  });

  it('gives up (null) on text that is not a kubeconfig', () => {
    expect(kubeconfigSecretValues('a: [')).toBeNull();
    expect(kubeconfigSecretValues('hello')).toBeNull();
  });
});
