import type { Redis } from 'ioredis';

const readyOf = new WeakMap<Redis, Promise<void>>();

/**
 * Resolves once the connection is ready: at once when it is, else at its next 'ready', with one
 * listener on the connection however many wait (every job kind's worker waits on the same one).
 */
export function whenReady(connection: Redis): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  let ready = readyOf.get(connection);
  if (!ready) {
    ready = new Promise<void>((resolve) => connection.once('ready', () => resolve()));
    readyOf.set(connection, ready);
    void ready.then(() => readyOf.delete(connection));
  }
  return ready;
}
