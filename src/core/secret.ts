import { inspect } from 'node:util';

/**
 * A secret value held in memory. It prints as `[redacted]` everywhere
 * (JSON, string interpolation, util.inspect) so that it cannot leak by accident;
 * only `reveal()` hands out the value, at the point of use.
 */
export class Secret {
  readonly #value: string;
  readonly source: string;

  constructor(value: string, source: string) {
    this.#value = value;
    this.source = source;
  }

  reveal(): string {
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
