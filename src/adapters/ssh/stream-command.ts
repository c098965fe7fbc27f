import type ssh2 from 'ssh2';
import { ChatopsError } from '../../core/errors.ts';
import type { SafeCommand } from './shell-quote.ts';
import type { StreamEnd, StreamingCommand } from './types.ts';

type Ssh2Client = InstanceType<typeof ssh2.Client>;

/** A line longer than this is a runaway, not an event: it is cut here rather than held in memory. */
const MAX_LINE_BYTES = 64 * 1024;
/** Only the start of stderr is kept: enough to say why the command ended. */
const STDERR_CAP_BYTES = 8 * 1024;

/** Opens one exec channel and reads its stdout line by line for as long as it runs. */
export function streamCommand(client: Ssh2Client, where: string, command: SafeCommand, onLine: (line: string) => void): Promise<StreamingCommand> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err, channel) => {
      if (err) {
        reject(new ChatopsError('SSH_FAILED', `cannot run a command on ${where}: ${err.message}`, { cause: err }));
        return;
      }
      const lines = new LineSplitter(onLine);
      let stderr = '';
      let code: number | null = null;
      let signal: string | undefined;
      let exited = false;
      channel.on('data', (chunk: Buffer) => lines.push(chunk));
      channel.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < STDERR_CAP_BYTES) stderr += chunk.toString('utf8').slice(0, STDERR_CAP_BYTES - stderr.length);
      });
      channel.on('exit', (exitCode: number | null, exitSignal?: string) => {
        exited = true;
        if (typeof exitCode === 'number') code = exitCode;
        else if (exitSignal) signal = exitSignal;
      });
      const done = new Promise<StreamEnd>((settle) => {
        channel.on('close', () => {
          lines.end();
          settle({ code, stderr, dropped: !exited, ...(signal ? { signal } : {}) });
        });
      });
      resolve({ done, stop: () => channel.close() });
    });
  });
}

/** Splits a byte stream into UTF-8 lines; a partial line waits for the rest. */
class LineSplitter {
  #pending = Buffer.alloc(0);

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    let buffer = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    let newline = buffer.indexOf(0x0a);
    while (newline !== -1) {
      this.#emit(buffer.subarray(0, newline));
      buffer = buffer.subarray(newline + 1);
      newline = buffer.indexOf(0x0a);
    }
    this.#pending = buffer.length > MAX_LINE_BYTES ? Buffer.alloc(0) : Buffer.from(buffer);
  }

  end(): void {
    if (this.#pending.length) this.#emit(this.#pending);
    this.#pending = Buffer.alloc(0);
  }

  #emit(bytes: Buffer): void {
    this.onLine(bytes.toString('utf8').replace(/\r$/, ''));
  }
}
