import { describe, expect, it } from 'vitest';
import { createRedactor, secretFragments } from '../../src/core/redact.ts';
import { Secret } from '../../src/core/secret.ts';

/*
 * Secrets trying to leave in a message: token-shaped strings the config cannot know, short values
 * of credential-named keys, known secrets in every encoding they travel in (JSON, percent- and
 * base64-encoded, a clipped or mrkdwn-escaped copy), and characters that deceive a reader (bidi, zero-width).
 */

// Shapes the config cannot know: each sample is built at run time, so no token-shaped literal sits in the repo.
const slackToken = (prefix: string) => `${prefix}-${'1234567890'}-${'A1b2C3d4E5f6G7h8'}`;

describe('one redaction pass removes anything shaped like a secret', () => {
  const redact = createRedactor([]);

  it.each([
    ['a Slack bot token', slackToken('xoxb')],
    ['a Slack user token', slackToken('xoxp')],
    ['a Slack refresh token', slackToken('xoxe')],
    ['a Slack rotated token', `xoxe.${slackToken('xoxp')}`],
    ['a Slack app token', `xapp-1-A0123BCDE-${'1234567890'}-abcdef0123456789`],
    ['an RSA private key', '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1x\nabc\n-----END RSA PRIVATE KEY-----'],
    ['a private key cut short', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUA'],
    ['a MAAS API key', 'Fq3kW9xYz2Lm8Np4Qr:Ht5vB7nM3kL9pQ2wXz:Ab3Cd5Ef7Gh9Jk2Lm4Np6Qr8St0Uv2Wx'],
    ['a bearer token', 'Authorization: Bearer abc123def456ghi789'],
    ['a basic credential', 'authorization: Basic b3BzOmh1bnRlcjI='],
    ['a JWT (service-account token)', 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLXBhcnQ'],
    ['a kubeconfig token', 'users:\n- name: admin\n  user:\n    token: 0123abcd-kube-canary-token'],
    ['kubeconfig key data', '    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t'],
    ['a password in JSON', '{"user":"ops","password":"hunter2-hunter2"}'],
    ['a power_pass from MAAS', 'power_pass=ipmi-secret-99'],
    ['an api_key in a query string', 'GET /x?api_key=AKIA0123456789&y=1'],
    ['an OAuth consumer key in a header', 'OAuth oauth_consumer_key="Fq3kW9xYz2Lm8Np4Qr", oauth_token="Ht5vB7nM3kL9pQ2wXz"'],
    ['a redis URL with a password', 'connect to redis://:s3cr3t-pass@10.0.0.5:6379/0 failed'],
    ['an http URL with user and password', 'GET https://ops:hunter2pass@maas.example/MAAS/api/2.0/'],
    ['a signing secret assignment', 'SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5'],
  ])('%s', (_name, sample) => {
    const out = redact(`before ${sample} after`);
    expect(out).toContain('[redacted]');
    expect(out.startsWith('before ')).toBe(true);
    expect(out.endsWith(' after') || out.includes('[redacted]')).toBe(true);
  });

  it('keeps the label and the host so the message still says what failed', () => {
    expect(redact('connect to redis://:s3cr3t-pass@10.0.0.5:6379/0 failed')).toBe('connect to redis://:[redacted]@10.0.0.5:6379/0 failed');
    expect(redact('https://ops:hunter2pass@maas.example/MAAS')).toBe('https://ops:[redacted]@maas.example/MAAS');
    expect(redact('token: 0123abcd-kube-canary-token')).toBe('token: [redacted]');
    expect(redact('Authorization: Bearer abc123def456ghi789')).toBe('Authorization: Bearer [redacted]');
  });

  it.each([
    'MAC 52:54:00:3a:91:0c on site-b-node1, status: SERVFAIL',
    'fqdn prod-k8s.maas.example resolves to 10.11.135.36',
    'http://127.0.0.1:5240/MAAS and qemu+ssh://ubuntu@172.16.1.28/system',
    'annotation e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'hostKey SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s',
    'basic checks passed; the token bucket is empty; Bearer of bad news',
    '2026-11-30T12:00:00.000Z took 42 ms',
  ])('leaves evidence alone: %s', (text) => {
    expect(redact(text)).toBe(text);
  });
});

describe('short and punctuated values of credential-named keys', () => {
  const redact = createRedactor([]);

  it.each([
    ['a punctuated power_pass in JSON', '{"power_pass":"P@ss;w0rd","power_user":"root"}', '{"power_pass":"[redacted]","power_user":"root"}'],
    ['a comma inside a form value', 'power_pass=pass,word1&power_user=root', 'power_pass=[redacted]&power_user=root'],
    ['a five-letter power_pass', 'power_pass: ADMIN', 'power_pass: [redacted]'],
    ['a value with spaces, quoted', '{"password": "a b c d"}', '{"password": "[redacted]"}'],
    ['a value with spaces, in YAML', 'password: a b c d', 'password: [redacted]'],
    ['single quotes', "secret='x;y'", "secret='[redacted]'"],
    ['MAAS JSON quoted inside a log line', JSON.stringify({ msg: 'MAAS said {"power_pass":"ADMIN","power_user":"root"}' }), JSON.stringify({ msg: 'MAAS said {"power_pass":"[redacted]","power_user":"root"}' })],
  ])('%s', (_name, input, shown) => {
    expect(redact(input)).toBe(shown);
  });
});

describe('known secret values, in every encoding they travel in', () => {
  const value = 'canary "quoted" secret/with+chars';
  const redact = createRedactor([value]);

  it.each([
    ['as is', value],
    ['inside JSON', JSON.stringify({ v: value })],
    ['percent-encoded', encodeURIComponent(value)],
    ['base64-encoded', Buffer.from(value).toString('base64')],
  ])('%s', (_name, text) => {
    const out = redact(`x ${text} y`);
    expect(out).toContain('[redacted]');
    expect(out).not.toContain('secret/with');
    expect(out).not.toContain('c2VjcmV0L3dpdGgr');
  });

  it('every line of a private key and every part of a MAAS key', () => {
    const key = new Secret('-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAline-one-of-key\nBBBBline-two-of-key\n-----END OPENSSH PRIVATE KEY-----', 'file:/k');
    const r = createRedactor(secretFragments(key));
    expect(r('ssh2 says: BBBBline-two-of-key is bad')).toBe('ssh2 says: [redacted] is bad');
  });
});

describe('the same pass defuses characters that deceive a reader', () => {
  const redact = createRedactor([]);

  it.each([
    ['a right-to-left override', 'node\u202Egnp.exe', 'node\\u{202e}gnp.exe'],
    ['a zero-width space', 'pro\u200Bd', 'pro\\u{200b}d'],
    ['a carriage return that would overwrite a terminal line', 'ok\rFAILED', 'ok\\u{d}FAILED'],
    ['an ANSI escape sequence', '\u001b[2Jcleared', '\\u{1b}[2Jcleared'],
  ])('%s', (_name, input, shown) => {
    expect(redact(input)).toBe(shown);
  });

  it('keeps newlines and tabs', () => {
    expect(redact('a\tb\nc')).toBe('a\tb\nc');
  });
});

describe('one pass on the rendered message still finds every secret, and only secrets', () => {
  const secret = 'k8s-Canary-Token-9f3a7c21b4d8e6f0';
  const redact = createRedactor([secret, 'p&ss<word>xyz'], { names: ['prod-badtoken', 'site-b'] });

  it('a secret clipped short before an ellipsis is still redacted', () => {
    expect(redact(`evidence \`${secret.slice(0, 19)}…\``)).toBe('evidence `[redacted]…`');
  });

  it('a secret escaped for mrkdwn is redacted', () => {
    expect(redact('MAAS said p&amp;ss&lt;word&gt;xyz')).toBe('MAAS said [redacted]');
  });

  it('a configured name that reads like a credential key keeps its words; a real key after it does not', () => {
    expect(redact('ERROR: Could not check prod-badtoken: the kubeconfig was refused')).toBe('ERROR: Could not check prod-badtoken: the kubeconfig was refused');
    expect(redact('prod-badtoken: token: abc123def456')).toBe('prod-badtoken: token: [redacted]');
    expect(createRedactor([])('other-badtoken: hunter2hunter2')).toBe('other-badtoken: [redacted]');
  });
});
