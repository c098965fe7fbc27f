/** Which peer a request went to. */
export type Peer = 'maas' | 'ssh' | 'kube';
/** ok; client_error (4xx, refused); server_error (5xx); timeout; error (anything else, e.g. connection refused). */
export type PeerOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'error';

export function peerOutcomeOfStatus(status: number): PeerOutcome {
  if (status === 0) return 'error';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'ok';
}

/** Classifies a thrown error by the conventions our adapters and Node use. */
export function peerOutcomeOfError(err: unknown): PeerOutcome {
  const e = err as { name?: unknown; code?: unknown; status?: unknown; statusCode?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode);
  if (Number.isInteger(status) && status >= 400) return peerOutcomeOfStatus(status);
  const code = String(e?.code ?? '');
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || /TIMEDOUT|TIMEOUT/i.test(code)) return 'timeout';
  return 'error';
}
