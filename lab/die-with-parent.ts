import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * Ends `child` with SIGKILL when this process ends, however it ends (a test runner tearing its
 * worker down, a timeout, SIGKILL). A watchdog shell reads a pipe from this process; the pipe
 * closes when this process is gone, and the watchdog then kills the child. Without it a
 * redis-server started for a test outlives it, holding its port (and, in the sentinel lab,
 * electing primaries) until someone finds it.
 */
export function dieWithParent(child: ChildProcess): void {
  if (child.pid === undefined) return;
  const watchdog = spawn('/bin/sh', ['-c', 'read -r _ignored; kill -9 "$0" 2>/dev/null', String(child.pid)], { stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.on('error', () => undefined);
  watchdog.stdin?.on('error', () => undefined);
  // Neither the watchdog nor its pipe keeps this process alive.
  watchdog.unref();
  (watchdog.stdin as Socket | null)?.unref();
  child.once('exit', () => watchdog.kill('SIGKILL'));
}
