import type { SshConnector, SshSession, SshTarget } from './types.ts';

/**
 * One SSH connection per host for the length of a job: every command of the job for the same
 * user@host:port shares it, even when asked for concurrently. `closeAll()` when the job ends.
 */
export interface SshSessionPool {
  session(target: SshTarget): Promise<SshSession>;
  closeAll(): void;
}

export function createSessionPool(connector: SshConnector, options?: { timeoutMs?: number }): SshSessionPool {
  const sessions = new Map<string, Promise<SshSession>>();
  return {
    session(target) {
      const key = `${target.user}@${target.host}:${target.port}`;
      let pending = sessions.get(key);
      if (!pending) {
        pending = connector.connect(target, options);
        // A failed connection is not cached: the next caller gets a fresh attempt and its own error.
        pending.catch(() => sessions.delete(key));
        sessions.set(key, pending);
      }
      return pending;
    },
    closeAll() {
      for (const pending of sessions.values()) pending.then((s) => s.close(), () => undefined);
      sessions.clear();
    },
  };
}
