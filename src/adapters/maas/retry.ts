import type { RetryHandler } from 'undici';

export interface RetryPolicy {
  /** How many times a failed attempt is repeated (0 = one attempt only). */
  retries: number;
  /** Wait before the first repeat; each further one waits twice as long. */
  backoffMs: number;
  /** The longest wait between attempts, also when MAAS's Retry-After asks for more. */
  maxWaitMs: number;
}

/** Errors that prove the request never reached MAAS, so even a POST may be sent again. */
export const NOT_SENT_CODES: readonly string[] = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'];

/** No answer, or one cut off: the request may or may not have run. */
const NO_ANSWER_CODES: readonly string[] = [
  ...NOT_SENT_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENETDOWN',
  'EHOSTDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
];

/** undici's codes for an attempt that ran out of time (the client's timeoutMs). */
export const TIMEOUT_CODES: readonly string[] = ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];

const SERVER_ERRORS = Array.from({ length: 100 }, (_, i) => 500 + i);

/**
 * What is sent again, as options of undici's retry interceptor. Only reads are: every 5xx and
 * every transport failure of a GET is repeated, each repeat signed afresh (sign-each-attempt.ts).
 * A write (PUT, POST) is sent once: a repair journals each write before it goes out, and a copy
 * sent below the journal would be a second write nobody recorded (a slow MAAS answering after
 * the timeout has applied every copy). Its unknown outcome is the step's to resolve, by reading.
 * Retry-After is honoured up to maxWaitMs; otherwise the wait doubles from backoffMs. The last
 * answer (a 5xx with MAAS's message) comes back as it is.
 */
export function retryOptionsFor(method: 'GET' | 'PUT' | 'POST', policy: RetryPolicy): RetryHandler.RetryOptions {
  return {
    maxRetries: method === 'GET' ? policy.retries : 0,
    minTimeout: policy.backoffMs,
    timeoutFactor: 2,
    maxTimeout: policy.maxWaitMs,
    retryAfter: true,
    throwOnError: false,
    methods: [method],
    statusCodes: SERVER_ERRORS,
    errorCodes: [...NO_ANSWER_CODES],
  };
}
