import type { ServerChannel } from 'ssh2';

/** ssh2's own fields for a write that waits for the client's window (lib/Channel.js, ssh2 1.17). */
interface StalledWrites {
  _chunk?: Buffer;
  _chunkcb?: unknown;
  _chunkErr?: Buffer;
  _chunkcbErr?: unknown;
}

/**
 * Sends a command's stdout and stderr over its server channel one chunk at a time, then its exit.
 *
 * Why not `child.stdout.pipe(channel)` and `child.stderr.pipe(channel.stderr)`: in ssh2 1.17 both
 * streams share one flag saying a write waits for the client's window, and the window-adjust
 * handler (lib/server.js) resumes stdout's leftover first. That leftover is never cleared once
 * sent, so a stall on stderr after any stall on stdout re-sends old stdout bytes and calls a spent
 * write callback; the channel then ends itself (no exit status reaches the client) and stderr is
 * never resumed. Two writes stalled at once strand stderr for the same reason. And ending the
 * channel does not wait for stderr's buffer, so its tail was dropped. Here one write is in flight
 * at a time, the spent leftover is cleared when its callback comes, and the exit status and end
 * go out only after every byte has been handed over, as sshd does.
 */
export class ChannelOutput {
  readonly #queue: { stream: 'stdout' | 'stderr'; data: Buffer | string }[] = [];
  readonly #paused = new Set<NodeJS.ReadableStream>();
  #writing = false;
  #finish: (() => void) | undefined;

  constructor(private readonly channel: ServerChannel) {
    // A closed channel ends both writables; a write racing that close is dropped, never thrown.
    channel.on('error', () => undefined);
    channel.stderr.on('error', () => undefined);
  }

  /** Reads a child's output stream into the channel, pausing it while the client is behind. */
  follow(source: NodeJS.ReadableStream, stream: 'stdout' | 'stderr'): void {
    source.on('data', (chunk: Buffer) => {
      this.write(stream, chunk);
      if (this.#queue.length > 8) {
        source.pause();
        this.#paused.add(source);
      }
    });
  }

  write(stream: 'stdout' | 'stderr', data: Buffer | string): void {
    this.#queue.push({ stream, data });
    this.#next();
  }

  /** Sends the exit status (a number, or a signal name) and ends the channel once all output is out. */
  exit(status: number | string): void {
    this.#finish = () => {
      if (!this.channel.writable) return;
      if (typeof status === 'number') this.channel.exit(status);
      else this.channel.exit(status, false, '');
      this.channel.end();
    };
    this.#next();
  }

  #next(): void {
    if (this.#writing) return;
    const item = this.#queue.shift();
    if (!item) {
      for (const source of this.#paused) source.resume();
      this.#paused.clear();
      const finish = this.#finish;
      this.#finish = undefined;
      finish?.();
      return;
    }
    const target = item.stream === 'stdout' ? this.channel : this.channel.stderr;
    if (!target.writable) {
      this.#next();
      return;
    }
    this.#writing = true;
    target.write(item.data, () => {
      const stalled = this.channel as unknown as StalledWrites;
      stalled._chunk = stalled._chunkcb = stalled._chunkErr = stalled._chunkcbErr = undefined;
      this.#writing = false;
      this.#next();
    });
  }
}
