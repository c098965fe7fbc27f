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

/** A long-running remote command whose stdout is read as it comes (`virsh event --loop`). */
export interface StreamingCommand {
  /** Settles when the command ends or the connection drops: its exit status and the start of its stderr. */
  readonly done: Promise<StreamEnd>;
  /** Closes the channel. Without a terminal sshd sends the command no signal: it sees its stdin end. */
  stop(): void;
}

export interface StreamEnd {
  /** Exit status; null when killed by a signal, or when the connection dropped first. */
  code: number | null;
  signal?: string;
  stderr: string;
  /** The SSH connection closed under the command (it did not end on its own). */
  dropped: boolean;
}

export interface SshSession {
  readonly host: string;
  /** Rejects (SSH_FAILED) when the channel closes with no exit status before the timeout: its outcome is unknown. */
  exec(command: SafeCommand, options?: ExecOptions): Promise<CommandResult>;
  /** Runs a command with no timeout and hands each complete stdout line to `onLine`, as it arrives. */
  stream(command: SafeCommand, onLine: (line: string) => void): Promise<StreamingCommand>;
  /** Called once when the connection closes, for whatever reason. */
  onClose(listener: () => void): void;
  close(): void;
}

/** Opens pinned SSH sessions; one session serves every command of a job for that host. */
export interface SshConnector {
  connect(target: SshTarget, options?: { timeoutMs?: number }): Promise<SshSession>;
}
