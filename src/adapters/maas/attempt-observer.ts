import type { Dispatcher } from 'undici';

export interface AttemptOutcome {
  /** The HTTP status, or 0 when no answer came (network error, timeout). */
  status: number;
  ms: number;
  /** Body bytes received in this attempt. */
  bytes: number;
  /** The transport error that ended the attempt, if one did. */
  error?: Error;
}

/**
 * An undici interceptor that reports every attempt once it ends (answer read, or failed). Composed
 * inside the retry interceptor, it sees each repeat as its own dispatch.
 */
export function observeAttempts(onAttempt: (outcome: AttemptOutcome) => void): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const started = performance.now();
    let status = 0;
    let bytes = 0;
    const done = (error?: Error) => onAttempt({ status, ms: Math.round(performance.now() - started), bytes, ...(error ? { error } : {}) });
    const observed: Dispatcher.DispatchHandler = {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, statusCode, headers, socket) => handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
      onResponseStart: (controller, statusCode, headers, statusMessage) => {
        status = statusCode;
        handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
      },
      onResponseData: (controller, chunk) => {
        bytes += chunk.length;
        handler.onResponseData?.(controller, chunk);
      },
      onResponseEnd: (controller, trailers) => {
        done();
        handler.onResponseEnd?.(controller, trailers);
      },
      onResponseError: (controller, error) => {
        done(error);
        handler.onResponseError?.(controller, error);
      },
    };
    return dispatch(opts, observed);
  };
}
