import { ApiException } from '@kubernetes/client-node';
import { ChatopsError } from '../../core/errors.ts';

/** What a request was about, so that an error can name it and the RBAC rule it needs. */
export interface KubeOperation {
  verb: 'get' | 'list' | 'patch';
  /** Plural resource name, e.g. maasclusters, configmaps. */
  resource: string;
  /** API group; '' for the core group. */
  group: string;
  namespace: string;
  /** The object's name; absent for a list. */
  name?: string;
  /** The API server's address, to say where it could not be reached. */
  server: string;
}

/** The HTTP status of a client-node ApiException, or null for a transport failure. */
export function statusOf(err: unknown): number | null {
  // A DOMException (timeout, abort) also has a numeric `code`: only an ApiException's is HTTP.
  return err instanceof ApiException && typeof err.code === 'number' ? err.code : null;
}

/**
 * A ChatopsError a person can act on. client-node's own message carries the response body and
 * headers; ours names the object, the verb, and the fix, and never a credential.
 */
export function kubeError(err: unknown, op: KubeOperation): ChatopsError {
  const status = statusOf(err);
  const what = describeTarget(op);
  if (status === 403) {
    const group = op.group ? `API group "${op.group}"` : 'the core API group ("")';
    return new ChatopsError('KUBE_FAILED', `Kubernetes forbids ${op.verb} on ${what}`, {
      hint: `Grant the bot's identity the RBAC verb "${op.verb}" on "${op.resource}" in ${group}, namespace ${op.namespace} (a Role and RoleBinding)`,
      cause: err,
    });
  }
  if (status === 401) {
    return new ChatopsError('KUBE_FAILED', `the Kubernetes API server at ${op.server} rejected the bot's credentials (401) reading ${what}`, {
      hint: 'The kubeconfig token or client certificate is invalid or expired: refresh the kubeconfig',
      cause: err,
    });
  }
  if (status !== null) {
    const message = apiMessage(err);
    return new ChatopsError('KUBE_FAILED', `Kubernetes answered ${status} to ${op.verb} ${what}${message ? `: ${message}` : ''}`, {
      hint: status >= 500 ? 'The API server is unhealthy: try again shortly' : 'Check the object and the bot\'s access to it',
      cause: err,
    });
  }
  return new ChatopsError('KUBE_FAILED', `cannot reach the Kubernetes API server at ${op.server} (${transportReason(err)})`, {
    hint: 'Check the kubeconfig server address and that the API server answers from where the bot runs',
    cause: err,
  });
}

function describeTarget(op: KubeOperation): string {
  const kind = op.group ? `${op.resource}.${op.group}` : op.resource;
  return op.name ? `${kind} "${op.name}" in namespace ${op.namespace}` : `${kind} in namespace ${op.namespace}`;
}

/** The `message` of a Kubernetes Status body, which names objects and users but no secret. */
function apiMessage(err: unknown): string | null {
  const body = (err as { body?: unknown }).body;
  const parsed = typeof body === 'string' ? safeJson(body) : body;
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 300) : null;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function transportReason(err: unknown): string {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur; depth++) {
    const e = cur as { name?: string; code?: unknown };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer in time';
    if (typeof e.code === 'string') return e.code;
    cur = (cur as { cause?: unknown }).cause;
  }
  // Client-side refusals (e.g. http:// without insecure-skip-tls-verify) say why in one line.
  return err instanceof Error ? (err.message.split('\n')[0] ?? err.name).slice(0, 200) : 'unknown error';
}
