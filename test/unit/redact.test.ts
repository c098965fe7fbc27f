import { describe, expect, it } from 'vitest';
import { createRedactor, redactDeep, secretFragments } from '../../src/core/redact.ts';
import { Secret } from '../../src/core/secret.ts';

describe('redaction', () => {
  const redact = createRedactor(['canary-secret-value-1', ...secretFragments(new Secret('aaaaaaaa:bbbbbbbb:cccccccccc', 'env:K'))]);

  it('removes known secret values and every part of a MAAS key', () => {
    expect(redact('key canary-secret-value-1 here')).toBe('key [redacted] here');
    expect(redact('token_secret is cccccccccc')).not.toContain('cccccccccc');
    expect(redact('consumer bbbbbbbb')).not.toContain('bbbbbbbb');
  });

  it('removes secret-shaped text the config does not know', () => {
    const samples = [
      'xoxb-123456789012-abcdefghijkl',
      'xapp-1-A0123-456789-abcdef',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----',
      'Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig',
      'AbCdEfGhIjKlMnOpQr:StUvWxYzAbCdEfGhIj:KlMnOpQrStUvWxYzAbCd',
      'client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0t',
      'oauth_signature="%26abcdefghij"',
    ];
    for (const s of samples) {
      const out = redact(`before ${s} after`);
      expect(out, s).toContain('[redacted]');
      expect(out, s).toMatch(/^before /);
    }
    expect(redact('xoxb-123456789012-abcdefghijkl')).not.toContain('abcdefghijkl');
  });

  it('leaves ordinary evidence alone', () => {
    const text = 'MAC 52:54:00:3a:91:0c on site-b-node1, status: SERVFAIL, fqdn prod-k8s.maas.example';
    expect(redact(text)).toBe(text);
  });

  it('redacts deeply inside reports', () => {
    const out = redactDeep({ a: ['x canary-secret-value-1'], b: { c: 'canary-secret-value-1' }, n: 3 }, redact);
    expect(out).toEqual({ a: ['x [redacted]'], b: { c: '[redacted]' }, n: 3 });
  });

  it('prints a Secret as redacted however it is formatted', async () => {
    const s = new Secret('hunter2-very-secret', 'env:X');
    const { inspect } = await import('node:util');
    expect(`${s}`).toBe('[redacted]');
    expect(JSON.stringify({ s })).not.toContain('hunter2');
    expect(inspect({ s })).not.toContain('hunter2');
    expect(s.reveal()).toBe('hunter2-very-secret');
  });
});
