import { inspect } from 'node:util';

/**
 * A secret value held in memory. It prints as `[redacted]` everywhere
 * (JSON, string interpolation, util.inspect) so that it cannot leak by accident;
 * only `reveal()` hands out the value, at the point of use.
 *
 * A deferred secret (a `file:` reference) is read at its first `reveal()`, not when the config
 * loads: a process that never uses it (the bot never opens an SSH session) never needs the file.
 */
export class Secret {
  #value: string | undefined;
  #load: (() => string) | undefined;
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
  }

  /** A secret read by `load` at its first use; `load` throws (a ConfigError) when it cannot be read. */
  static deferred(load: () => string, source: string): Secret {
    const secret = new Secret('', source);
    secret.#value = undefined;
    secret.#load = load;
    return secret;
  }

  /** Whether the value is in memory yet (a deferred secret before its first use is not). */
  get loaded(): boolean {
    return this.#value !== undefined;
  }

  reveal(): string {
    if (this.#value === undefined) {
      this.#value = (this.#load as () => string)();
      this.#load = undefined;
    }
    return this.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return `[redacted ${this.source}]`;
  }

  [inspect.custom](): string {
    return `Secret(${this.source})`;
  }
}
