import { createHmac } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { describe, expect, it } from 'vitest';
import { maasOAuthHeader, parseMaasApiKey } from '../../../src/adapters/maas/oauth-header.ts';
import { parseAuthorization, verifyOAuth } from '../../../lab/maas-sim/oauth-verify.ts';

const KEY = 'ConsumerKey1234567:TokenKey123456789A:TokenSecret/with+odd=chars&more!';
const URL_ = 'http://127.0.0.1:5240/MAAS/api/2.0/machines/?op=power_parameters&id=abc';

function params(header: string): Record<string, string> {
  const parsed = parseAuthorization(header);
  if (!parsed) throw new Error('not an OAuth header');
  return parsed;
}

describe('maasOAuthHeader', () => {
  it('signs with PLAINTEXT: "&" + token_secret, percent-encoded in the header', () => {
    const header = maasOAuthHeader('ck:tk:s3cret', { method: 'GET', url: URL_ });
    expect(header.startsWith('OAuth ')).toBe(true);
    expect(header).toContain('oauth_signature="%26s3cret"');
    expect(header).toContain('oauth_signature_method="PLAINTEXT"');
    expect(header).toContain('oauth_consumer_key="ck"');
    expect(header).toContain('oauth_token="tk"');
    expect(header).toContain('oauth_version="1.0"');
  });

  it('carries a nonce and an integer timestamp, different nonces per call', () => {
    const a = params(maasOAuthHeader('ck:tk:ts', { method: 'GET', url: URL_ }));
    const b = params(maasOAuthHeader('ck:tk:ts', { method: 'GET', url: URL_ }));
    expect(a.oauth_timestamp).toMatch(/^\d+$/);
    expect(a.oauth_nonce).toBeTruthy();
    expect(a.oauth_nonce).not.toBe(b.oauth_nonce);
  });

  it('percent-encodes the token secret inside the signature, then the signature again in the header', () => {
    const header = maasOAuthHeader('ck:tk:a/b+c', { method: 'GET', url: URL_ });
    // signature = "&" + pe("a/b+c") = "&a%2Fb%2Bc"; header value = pe(signature)
    expect(header).toContain('oauth_signature="%26a%252Fb%252Bc"');
    expect(params(header).oauth_signature).toBe('&a%2Fb%2Bc');
  });

  it('uses an empty consumer secret: nothing precedes the "&"', () => {
    expect(params(maasOAuthHeader(KEY, { method: 'PUT', url: URL_ })).oauth_signature?.startsWith('&')).toBe(true);
  });

  it('is accepted by the simulator\'s MAAS-style verification, and a different secret is not', () => {
    const request = (authorization: string) => ({
      method: 'GET',
      baseUrl: 'http://127.0.0.1:5240/MAAS/api/2.0/machines/',
      query: new URLSearchParams('op=power_parameters&id=abc'),
      form: new URLSearchParams(),
      authorization,
    });
    expect(verifyOAuth(request(maasOAuthHeader(KEY, { method: 'GET', url: URL_ })), [KEY]).ok).toBe(true);
    const forged = maasOAuthHeader(KEY.replace(/:[^:]+$/, ':other-secret'), { method: 'GET', url: URL_ });
    // As MAAS 3.4.10 answers (row wrong-secret): the message quotes the real secret's base string.
    const outcome = verifyOAuth(request(forged), [KEY]);
    expect(outcome).toMatchObject({ ok: false, status: 401 });
    expect(outcome.ok ? '' : outcome.message).toMatch(/^Authorization Error: 'Invalid signature\. Expected signature base string: &/);
  });
});

describe('parseMaasApiKey', () => {
  it('splits the three parts', () => {
    expect(parseMaasApiKey(' ck:tk:ts ')).toEqual({ consumerKey: 'ck', tokenKey: 'tk', tokenSecret: 'ts' });
  });

  it.each(['', 'only-one', 'a:b', 'a::c', 'a:b:c:d'])('rejects %j without echoing it', (bad) => {
    let message = '';
    try {
      parseMaasApiKey(bad);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not a MAAS API key/);
    if (bad.length > 3) expect(message).not.toContain(bad);
  });
});

describe('verifyOAuth (the simulator side)', () => {
  const base = { method: 'POST', baseUrl: 'http://127.0.0.1:1/MAAS/api/2.0/machines/abc/', query: new URLSearchParams('op=mark_broken'), form: new URLSearchParams('comment=x y') };

  it('accepts HMAC-SHA1 over method, URL, query and form fields', () => {
    const [ck, tk, ts] = KEY.split(':') as [string, string, string];
    const oauth = new OAuth({
      consumer: { key: ck, secret: '' },
      signature_method: 'HMAC-SHA1',
      hash_function: (text, key) => createHmac('sha1', key).update(text).digest('base64'),
    });
    const data = oauth.authorize({ url: `${base.baseUrl}?op=mark_broken`, method: 'POST', data: { comment: 'x y' } }, { key: tk, secret: ts });
    const header = oauth.toHeader(data).Authorization;
    expect(verifyOAuth({ ...base, authorization: header }, [KEY]).ok).toBe(true);
    expect(verifyOAuth({ ...base, form: new URLSearchParams('comment=changed'), authorization: header }, [KEY]).ok).toBe(false);
  });

  it('answers MAAS\'s messages for a missing header, an unknown consumer, an unknown token, a bad timestamp', () => {
    expect(verifyOAuth({ ...base, authorization: undefined }, [KEY])).toMatchObject({ status: 401, message: 'Authorization Error: Invalid API key.' });
    const other = maasOAuthHeader('someone:else:entirely', { method: 'POST', url: base.baseUrl });
    expect(verifyOAuth({ ...base, authorization: other }, [KEY])).toMatchObject({ status: 401, message: 'Authorization Error: Invalid API key.' });
    const [ck] = KEY.split(':');
    const wrongToken = maasOAuthHeader(`${ck}:wrongtoken:x`, { method: 'POST', url: base.baseUrl });
    expect(verifyOAuth({ ...base, authorization: wrongToken }, [KEY])).toMatchObject({ status: 401, message: "Authorization Error: 'Invalid access token: wrongtoken'" });
    const badTimestamp = maasOAuthHeader(KEY, { method: 'POST', url: base.baseUrl }).replace(/oauth_timestamp="\d+"/, 'oauth_timestamp="soon"');
    expect(verifyOAuth({ ...base, authorization: badTimestamp }, [KEY])).toMatchObject({ status: 400 });
  });
});
