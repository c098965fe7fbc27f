/**
 * `maas-chatops worker` / `bot` as real child processes (node bin/maas-chatops.js <role> --config …),
 * the way an operator runs several of them against one Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/maas-chatops.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RoleProcess {
  child: ChildProcess;
  pid: number;
  /** The port it listens on (PORT=0 picks one), from its start line. */
  port: number | undefined;
  /** The last lines it wrote to stderr (its JSON log), for a failure message. */
  recentLog(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface RoleProcessOptions {
  role: 'worker' | 'bot' | 'serve';
  configPath: string;
  /** Added to this process's environment (REDIS_URL, MAAS_CHATOPS_QUEUE_PREFIX, PORT, SLACK_*, the config's env: secrets). */
  env: Record<string, string>;
  /** How long to wait for "maas-chatops started"; default 30 s. */
  startTimeoutMs?: number;
  /**
   * Listen on this port and call it started when /healthz answers 200, instead of waiting for
   * the "maas-chatops started" log line (which LOG_LEVEL=warn does not print).
   */
  port?: number;
  /** Node flags, e.g. --cpu-prof for a profile of the run. */
  execArgv?: string[];
}

export async function startRoleProcess(options: RoleProcessOptions): Promise<RoleProcess> {
  const child = spawn(process.execPath, [...(options.execArgv ?? []), BIN, options.role, '--config', options.configPath], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...options.env, ...(options.port ? { PORT: String(options.port) } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let port: number | undefined = options.port;
  let resolveStarted: (() => void) | undefined;
  const started = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });
  let buffered = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      if (lines.length > 200) lines.shift();
      if (line.includes('"msg":"maas-chatops started"')) {
        const m = /"port":(\d+)/.exec(line);
        if (m) port = Number(m[1]);
        resolveStarted?.();
      }
    }
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  if (options.port) void pollHealth(options.port, exited).then(() => resolveStarted?.());
  const timeoutMs = options.startTimeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    started.then(() => 'started' as const),
    exited.then((code) => `exited with ${code}` as const),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`did not start within ${timeoutMs} ms`), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  const recentLog = () => lines.slice(-20).join('\n');
  if (outcome !== 'started') {
    child.kill('SIGKILL');
    throw new Error(`maas-chatops ${options.role} ${outcome}:\n${recentLog()}`);
  }
  return {
    child,
    pid: child.pid!,
    get port() {
      return port;
    },
    recentLog,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function pollHealth(port: number, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (!gone) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
