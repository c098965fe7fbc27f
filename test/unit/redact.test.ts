import { randomBytes } from 'node:crypto';
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

describe('a known secret clipped before an ellipsis', () => {
  // An OpenSSH private key's shape (lines of 70): each ellipsis once looked back as far as each line and the whole key, in every encoding.
  const body = randomBytes(2400).toString('base64').replace(/.{70}/g, '$&\n');
  const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----`;
  const redact = createRedactor(secretFragments(new Secret(key, 'file:/k')));
  const line = key.split('\n')[1] ?? '';

  it('is redacted up to the ellipsis, however long the head; text before it stays', () => {
    const token = randomBytes(1500).toString('hex');
    expect(createRedactor([token])(`body: ${token.slice(0, 2500)}… (cut)`)).toBe('body: [redacted]… (cut)');
    expect(redact(`first … then ${line.slice(0, 6)}…, and ${line.slice(0, 60)}…`)).toBe('first … then [redacted]…, and [redacted]…');
  });

  it('a head never reaches back past an earlier ellipsis, unless a secret itself holds one', () => {
    const cut = `${line.slice(0, 3)}…${line.slice(3, 10)}…`;
    expect(redact(cut)).toBe(cut);
    const withEllipsis = createRedactor(['abc…defghij']);
    expect(withEllipsis('x abc…def…')).toBe('x [redacted]…');
  });

  // Bounded by the test timeout, like the other hostile texts: looking back each secret's length from every ellipsis took about a minute here.
  it('2 MiB of ellipses with six sites\' SSH keys configured come back unchanged (each character looked at for one ellipsis only)', () => {
    const keys = Array.from({ length: 6 }, () => new Secret(`-----BEGIN OPENSSH PRIVATE KEY-----\n${randomBytes(2400).toString('base64').replace(/.{70}/g, '$&\n')}\n-----END OPENSSH PRIVATE KEY-----`, 'file:/k'));
    const text = '…'.repeat(2 * 1024 * 1024);
    expect(createRedactor(keys.flatMap(secretFragments))(text)).toBe(text);
  });
});
