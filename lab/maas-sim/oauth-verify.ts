/**
 * OAuth 1.0a verification as MAAS does it (canonical/maas src/maasserver/api/auth.py, on piston3's
 * OAuth server): PLAINTEXT and HMAC-SHA1, consumer secret empty, the key `consumer:token:secret`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type AuthOutcome = { ok: true; consumerKey: string } | { ok: false; status: 400 | 401; message: string };

const REQUIRED = ['oauth_consumer_key', 'oauth_token', 'oauth_signature', 'oauth_signature_method', 'oauth_timestamp', 'oauth_nonce'];

export const INVALID_API_KEY = 'Authorization Error: Invalid API key.';

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

export function verifyOAuth(request: SignedRequest, apiKeys: string[]): AuthOutcome {
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

  const method = params.oauth_signature_method;
  let expected: string;
  if (method === 'PLAINTEXT') expected = signingKey(key);
  else if (method === 'HMAC-SHA1') expected = hmacSignature(request, params, key);
  else {
    return { ok: false, status: 401, message: `Authorization Error: 'Signature method ${method} not supported try one of the following: HMAC-SHA1, PLAINTEXT'` };
  }
  if (!sameText(expected, params.oauth_signature ?? '')) return { ok: false, status: 401, message: "Authorization Error: 'Invalid signature.'" };
  return { ok: true, consumerKey: key.consumerKey };
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

function hmacSignature(request: SignedRequest, oauthParams: Record<string, string>, key: KeyParts): string {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(oauthParams)) {
    if (name.startsWith('oauth_') && name !== 'oauth_signature') pairs.push([name, value]);
  }
  for (const [name, value] of request.query) pairs.push([name, value]);
  for (const [name, value] of request.form) pairs.push([name, value]);
  const encoded = pairs.map(([n, v]) => [percentEncode(n), percentEncode(v)] as const);
  encoded.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const parameterString = encoded.map(([n, v]) => `${n}=${v}`).join('&');
  const base = [request.method.toUpperCase(), percentEncode(request.baseUrl), percentEncode(parameterString)].join('&');
  return createHmac('sha1', signingKey(key)).update(base).digest('base64');
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
