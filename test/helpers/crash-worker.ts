import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LockTuning } from '../../src/engine/job-types.ts';
import { TEST_REDIS_URL } from './redis.ts';

const CHILD = fileURLToPath(new URL('../integration/repair-crash-child.ts', import.meta.url));

export interface CrashWorker {
  /** What the worker printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILLs the worker as soon as `ready()` holds, polling every `stepMs`; fails if it exits or 30 s pass first. */
  killWhen(ready: () => boolean | Promise<boolean>, what: string, stepMs?: number): Promise<NodeJS.Signals | number | null>;
}

/**
 * A worker process running the execute job of an approved repair plan (the plan names its kind and target), to be SIGKILLed mid-plan;
 * given `bullmqLock`, a BullMQ worker (with that lock tuning) that runs the queued execute job instead.
 */
export function startCrashWorker(options: {
  configText: string;
  configEnv: Record<string, string>;
  prefix: string;
  planId: string;
  redisUrl?: string;
  bullmqLock?: LockTuning;
}): CrashWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      CRASH_CONFIG: options.configText,
      CRASH_CONFIG_ENV: JSON.stringify(options.configEnv),
      CRASH_REDIS_URL: options.redisUrl ?? TEST_REDIS_URL,
      ...(options.bullmqLock ? { CRASH_MODE: 'worker', CRASH_LOCK: JSON.stringify(options.bullmqLock) } : {}),
      CRASH_PREFIX: options.prefix,
      CRASH_PLAN: options.planId,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return {
    output: () => output,
    killWhen: async (ready, what, stepMs = 5) => {
      const deadline = Date.now() + 30_000;
      while (!(await ready())) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${what} never happened under the worker: ${output}`);
        await new Promise((r) => setTimeout(r, stepMs));
      }
      child.kill('SIGKILL');
      return exited;
    },
  };
}
