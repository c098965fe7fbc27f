import type { Dispatcher } from 'undici';

/**
 * An undici interceptor that gives every dispatch its own Authorization header. Composed inside
 * the retry interceptor, a repeat carries a fresh OAuth nonce and timestamp: MAAS refuses a nonce
 * it has seen succeed (401 "Nonce already used", piston3's nonce store behind
 * canonical/maas src/maasserver/api/auth.py; recorded on 3.4.10, row replay-2-same-nonce).
 */
export function signEachAttempt(sign: () => string): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const headers = { ...(opts.headers as Record<string, string> | undefined), authorization: sign() };
    return dispatch({ ...opts, headers }, handler);
  };
}
