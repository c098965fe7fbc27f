import OAuth from 'oauth-1.0a';

/** The three parts of a MAAS API key (`consumer_key:token_key:token_secret`). */
export interface MaasApiKeyParts {
  consumerKey: string;
  tokenKey: string;
  tokenSecret: string;
}

export function parseMaasApiKey(apiKey: string): MaasApiKeyParts {
  const parts = apiKey.trim().split(':');
  const [consumerKey, tokenKey, tokenSecret] = parts;
  if (parts.length !== 3 || !consumerKey || !tokenKey || !tokenSecret) {
    // The value itself is never echoed: it is a secret.
    throw new Error('not a MAAS API key: expected consumer_key:token_key:token_secret');
  }
  return { consumerKey, tokenKey, tokenSecret };
}

/**
 * The Authorization header MAAS expects: OAuth 1.0a, PLAINTEXT, empty consumer secret.
 * The signature is `&` + token_secret, percent-encoded in the header (`%26...`).
 * oauth-1.0a's PLAINTEXT default returns the signing key; an HMAC hash_function must not be given.
 */
export function maasOAuthHeader(apiKey: string, request: { method: string; url: string }): string {
  const key = parseMaasApiKey(apiKey);
  const oauth = new OAuth({
    consumer: { key: key.consumerKey, secret: '' },
    signature_method: 'PLAINTEXT',
  });
  const data = oauth.authorize(
    { url: request.url, method: request.method },
    { key: key.tokenKey, secret: key.tokenSecret },
  );
  return oauth.toHeader(data).Authorization;
}
