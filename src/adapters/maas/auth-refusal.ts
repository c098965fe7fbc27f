/**
 * What a MAAS 401 means, read by its structure and never shown as MAAS wrote it. MAAS wraps
 * piston3's OAuthError as "Authorization Error: %r" (canonical/maas src/maasserver/api/auth.py
 * OAuthUnauthorized), and for a wrong token secret piston3's message goes on with "Expected
 * signature base string: &<the real token secret>" (recorded on 3.4.10, row wrong-secret). So a
 * 401's text is classified here and replaced by a fixed sentence before any text is built from it;
 * only the numbers of an expired timestamp are kept, parsed as numbers.
 */

export type AuthRefusalKind =
  | 'invalid-key'
  | 'invalid-token'
  | 'invalid-signature'
  | 'nonce-used'
  | 'expired-timestamp'
  | 'unsupported-signature-method'
  | 'unauthenticated'
  | 'other';

export interface AuthRefusal {
  kind: AuthRefusalKind;
  /** Our own words for it: safe to show anywhere. */
  text: string;
  /** For expired-timestamp: the timestamp sent and MAAS's clock, in seconds. */
  givenS?: number;
  maasNowS?: number;
}

const SENTENCES: Record<AuthRefusalKind, string> = {
  'invalid-key': 'MAAS does not know the API key (its consumer key)',
  'invalid-token': 'MAAS does not know the API key\'s token (it was deleted, or the key is from another region)',
  'invalid-signature': 'MAAS rejected the request\'s signature: the API key\'s token secret is not the one MAAS holds (MAAS\'s own message is not shown: it echoes the real secret)',
  'nonce-used': 'MAAS had already received a request with this OAuth nonce: an earlier copy of the request reached it',
  'expired-timestamp': 'MAAS refused the request\'s OAuth timestamp as too far from its own clock',
  'unsupported-signature-method': 'MAAS does not accept the request\'s OAuth signature method',
  unauthenticated: 'MAAS answered as to a request without credentials',
  other: 'MAAS refused the credentials (its message is not shown: a 401 can echo key material)',
};

/** The region's limit on OAuth timestamp drift (piston3 OAuthServer.timestamp_threshold; maasserver/nonces_cleanup.py). */
export const MAAS_TIMESTAMP_THRESHOLD_S = 300;

/** Classifies a 401 body by its structure; the body itself never leaves this function. */
export function readAuthRefusal(body: string): AuthRefusal {
  const text = body.trim();
  const kind = refusalKind(text);
  if (kind === 'expired-timestamp') {
    const match = /given (-?\d+) and now (-?\d+)/.exec(text);
    if (match) {
      const givenS = Number(match[1]);
      const maasNowS = Number(match[2]);
      return { kind, givenS, maasNowS, text: `${SENTENCES[kind]} (sent ${givenS}, MAAS's clock ${maasNowS}: ${Math.abs(maasNowS - givenS)} s apart; MAAS allows ${MAAS_TIMESTAMP_THRESHOLD_S} s)` };
    }
  }
  return { kind, text: SENTENCES[kind] };
}

function refusalKind(text: string): AuthRefusalKind {
  const reason = /^Authorization Error:\s*['"]?(.*)$/s.exec(text)?.[1] ?? '';
  if (/^Invalid API key\.?/.test(reason) || /^Invalid consumer/.test(reason)) return 'invalid-key';
  if (/^Invalid access token/.test(reason)) return 'invalid-token';
  if (/^Invalid signature/.test(reason)) return 'invalid-signature';
  if (/^Nonce already used/.test(reason)) return 'nonce-used';
  if (/^Expired timestamp/.test(reason)) return 'expired-timestamp';
  if (/^Signature method .* not supported/.test(reason)) return 'unsupported-signature-method';
  if (text === 'Forbidden') return 'unauthenticated';
  return 'other';
}

/**
 * How far MAAS's clock is from ours, in whole seconds (positive: MAAS is ahead), from the answer's
 * Date header or, failing that, the numbers of an expired-timestamp refusal. Undefined when neither says.
 */
export function maasClockOffsetS(dateHeader: string | undefined, refusal: AuthRefusal | undefined, localNowMs: number): number | undefined {
  const maasMs = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  if (Number.isFinite(maasMs)) return Math.round((maasMs - localNowMs) / 1000);
  if (refusal?.maasNowS !== undefined) return Math.round(refusal.maasNowS - localNowMs / 1000);
  return undefined;
}

/** A skew MAAS refuses: beyond its threshold, less the Date header's one-second resolution. */
export function isRefusedSkew(offsetS: number | undefined): offsetS is number {
  return offsetS !== undefined && Math.abs(offsetS) > MAAS_TIMESTAMP_THRESHOLD_S - 1;
}
