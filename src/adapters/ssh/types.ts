import type { Secret } from '../../core/secret.ts';
import type { SafeCommand } from './shell-quote.ts';

export interface SshTarget {
  host: string;
  port: number;
  user: string;
  privateKey: Secret;
  /** Pinned fingerprints (`SHA256:...`) accepted for this host; empty means refuse. */
  hostKeys: string[];
  /** Where this host is configured (`sites.site-b.rack.ssh`), so a refusal can say where to pin. */
  configPath?: string;
}

/** Bytes of stdout (and of stderr) kept per command: a runaway command cannot exhaust the worker's memory. */
export const SSH_OUTPUT_CAP_BYTES = 4 * 1024 * 1024;

export interface CommandResult {
  stdout: string;
  stderr: string;
  /** stdout ran past SSH_OUTPUT_CAP_BYTES and was cut there: `stdout` is not all the command printed. */
  stdoutCut?: true;
  stderrCut?: true;
  /** Exit status; null when the command was killed by a signal or timed out. */
  code: number | null;
  signal?: string;
  /** The command ran past its timeout and its channel was closed. */
  timedOut?: boolean;
}

export interface ExecOptions {
  timeoutMs?: number;
}

export interface SshSession {
  readonly host: string;
  exec(command: SafeCommand, options?: ExecOptions): Promise<CommandResult>;
  close(): void;
}

/** Opens pinned SSH sessions; one session serves every command of a job for that host. */
export interface SshConnector {
  connect(target: SshTarget, options?: { timeoutMs?: number }): Promise<SshSession>;
}
