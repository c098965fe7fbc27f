/**
 * OAuth 1.0a verification as MAAS does it (canonical/maas src/maasserver/api/auth.py, on piston3's
 * OAuth server): PLAINTEXT and HMAC-SHA1, consumer secret empty, the key `consumer:token:secret`.
 * Errors are piston3's OAuthError messages as api/auth.py OAuthUnauthorized wraps them
 * ("Authorization Error: %r"); the wording is the recorded region's (test/fixtures/maas-3.4.10).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type AuthOutcome = { ok: true; consumerKey: string; tokenKey: string; nonce: string; timestamp: number } | { ok: false; status: 400 | 401; message: string };

const REQUIRED = ['oauth_consumer_key', 'oauth_token', 'oauth_signature', 'oauth_signature_method', 'oauth_timestamp', 'oauth_nonce'];

export const INVALID_API_KEY = 'Authorization Error: Invalid API key.';

/** piston3 OAuthServer.timestamp_threshold, which maasserver/nonces_cleanup.py reuses: 300 s. */
export const TIMESTAMP_THRESHOLD_S = 300;

interface KeyParts {
  consumerKey: string;
  tokenKey: string;
  tokenSecret: string;
}

export interface SignedRequest {
  method: string;
  /** scheme://host[:port]/path, without the query. */
  baseUrl: string;
  query: URLSearchParams;
  /** Form fields when the body is form-encoded: HMAC-SHA1 signs them too. */
  form: URLSearchParams;
  authorization: string | undefined;
}

export interface VerifyOptions {
  /** The region's clock, in seconds. */
  nowS: number;
  /** Nonces of requests that succeeded (`consumer token timestamp nonce`): each is refused once spent. */
  spentNonces: ReadonlySet<string>;
}

/** The key a spent nonce is kept under (piston3's Nonce model: consumer, token, timestamp, nonce). */
export function nonceKey(outcome: { consumerKey: string; tokenKey: string; timestamp: number; nonce: string }): string {
  return `${outcome.consumerKey} ${outcome.tokenKey} ${outcome.timestamp} ${outcome.nonce}`;
}

export function verifyOAuth(request: SignedRequest, apiKeys: string[], options: VerifyOptions = { nowS: Date.now() / 1000, spentNonces: new Set() }): AuthOutcome {
  const params = parseAuthorization(request.authorization);
  if (!params || REQUIRED.some((name) => params[name] === undefined)) return { ok: false, status: 401, message: INVALID_API_KEY };
  if (!/^-?\d+$/.test(params.oauth_timestamp ?? '')) {
    return {
      ok: false,
      status: 400,
      message: 'Bad Request: the following problems were found among the auth params: oauth_timestamp has an unexpected type',
    };
  }
  const keys = apiKeys.map(splitKey).filter((k): k is KeyParts => k !== undefined);
  const forConsumer = keys.filter((k) => k.consumerKey === params.oauth_consumer_key);
  if (forConsumer.length === 0) return { ok: false, status: 401, message: INVALID_API_KEY };
  const key = forConsumer.find((k) => k.tokenKey === params.oauth_token);
  if (!key) return { ok: false, status: 401, message: `Authorization Error: 'Invalid access token: ${params.oauth_token}'` };

  // piston3 OAuthServer._check_timestamp, then _check_nonce, then the signature (rows old-timestamp, replay-2-same-nonce).
  const timestamp = Number(params.oauth_timestamp);
  const nowS = Math.floor(options.nowS);
  if (Math.abs(nowS - timestamp) > TIMESTAMP_THRESHOLD_S) {
    return {
      ok: false,
      status: 401,
      message: `Authorization Error: 'Expired timestamp: given ${timestamp} and now ${nowS} has a greater difference than threshold ${TIMESTAMP_THRESHOLD_S}'`,
    };
  }
  const nonce = params.oauth_nonce ?? '';
  if (options.spentNonces.has(nonceKey({ consumerKey: key.consumerKey, tokenKey: key.tokenKey, timestamp, nonce }))) {
    return { ok: false, status: 401, message: `Authorization Error: 'Nonce already used: ${nonce}'` };
  }

  const method = params.oauth_signature_method;
  let expected: string;
  let baseString: string;
  if (method === 'PLAINTEXT') {
    expected = signingKey(key);
    baseString = expected;
  } else if (method === 'HMAC-SHA1') {
    baseString = hmacBaseString(request, params);
    expected = createHmac('sha1', signingKey(key)).update(baseString).digest('base64');
  } else {
    return { ok: false, status: 401, message: `Authorization Error: 'Signature method ${method} not supported try one of the following: HMAC-SHA1, PLAINTEXT'` };
  }
  // piston3 names the base string it expected; for PLAINTEXT that is `&` + the real token secret (row wrong-secret).
  if (!sameText(expected, params.oauth_signature ?? '')) {
    return { ok: false, status: 401, message: `Authorization Error: 'Invalid signature. Expected signature base string: ${baseString}'` };
  }
  return { ok: true, consumerKey: key.consumerKey, tokenKey: key.tokenKey, nonce, timestamp };
}

/** `OAuth k="v", k2="v2"` as MAAS's parse_auth_params reads it, values percent-decoded. */
export function parseAuthorization(header: string | undefined): Record<string, string> | undefined {
  const text = (header ?? '').trim();
  if (!text.startsWith('OAuth')) return undefined;
  const out: Record<string, string> = {};
  for (const part of text.slice('OAuth'.length).split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim().replace(/^"|"$/g, '');
    out[name] = safeDecode(raw);
  }
  return out;
}

/** RFC 5849 percent-encoding (unreserved characters only are left alone). */
export function percentEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function splitKey(apiKey: string): KeyParts | undefined {
  const [consumerKey, tokenKey, tokenSecret, ...rest] = apiKey.split(':');
  if (!consumerKey || !tokenKey || tokenSecret === undefined || rest.length) return undefined;
  return { consumerKey, tokenKey, tokenSecret };
}

/** consumer_secret (empty for MAAS) & token_secret, each percent-encoded. */
function signingKey(key: KeyParts): string {
  return `&${percentEncode(key.tokenSecret)}`;
}

function hmacBaseString(request: SignedRequest, oauthParams: Record<string, string>): string {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(oauthParams)) {
    if (name.startsWith('oauth_') && name !== 'oauth_signature') pairs.push([name, value]);
  }
  for (const [name, value] of request.query) pairs.push([name, value]);
  for (const [name, value] of request.form) pairs.push([name, value]);
  const encoded = pairs.map(([n, v]) => [percentEncode(n), percentEncode(v)] as const);
  encoded.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const parameterString = encoded.map(([n, v]) => `${n}=${v}`).join('&');
  return [request.method.toUpperCase(), percentEncode(request.baseUrl), percentEncode(parameterString)].join('&');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
