/** Settles like `promise`, or rejects with `onTimeout()` after `ms`; the timer never holds the process open. */
export function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error = () => new Error(`no answer within ${ms} ms`)): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
