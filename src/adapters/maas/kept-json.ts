import { StringDecoder } from 'node:string_decoder';
import { Assembler } from 'stream-json/core/assembler.js';
import { jsonParser, type Token } from 'stream-json/core/parser.js';
import { getManyValues, isMany, none } from 'stream-chain/defs.js';
import { isSecretFieldName, withoutSecretFields } from './secret-fields.ts';
import { ANY_KEY, type KeptShape } from './kept-shapes.ts';

/** What was kept of a streamed answer, and what reading it cost. */
export interface KeptAnswer {
  value: unknown;
  /** The JSON size of what was kept. */
  keptBytes: number;
  /** Body bytes read from MAAS. */
  bytesRead: number;
  /** Elements of the top-level array (machines, discoveries); 0 for an object. */
  items: number;
}

/** Thrown when what is kept passes the cap; the caller names the setting. */
export class KeptTooLargeError extends Error {
  constructor(
    readonly maxKeptBytes: number,
    readonly items: number,
    readonly bytesRead: number,
  ) {
    super(`more than ${maxKeptBytes} bytes kept`);
    this.name = 'KeptTooLargeError';
  }
}

/** The body was not JSON: stream-json's own message says where it stopped. */
export class NotJsonError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'NotJsonError';
  }
}

type Frame =
  | { kind: 'object'; shape: Readonly<Record<string, KeptShape>>; value: Record<string, unknown>; key: string; next: KeptShape | undefined }
  | { kind: 'array'; item: KeptShape; value: unknown[] }
  | { kind: 'skip'; depth: number }
  | { kind: 'whole'; asm: Assembler };

/**
 * Reads a JSON body as it arrives (stream-json's tokenizer, packed tokens) and builds only what the
 * shape names: an ignored subtree is never assembled, so memory follows what is kept, not MAAS's
 * rendering. Secret-named keys are never kept, whatever the shape says.
 */
export async function readKeptJson(body: AsyncIterable<Buffer>, shape: KeptShape, maxKeptBytes: number): Promise<KeptAnswer> {
  const router = new KeptRouter(shape, maxKeptBytes);
  const parse = jsonParser({ streamValues: false });
  const decoder = new StringDecoder('utf8');
  let bytesRead = 0;
  const feed = (text: string | typeof none) => {
    let tokens: unknown;
    try {
      // A flushable stage takes `none` as the end of its input; its type names only the chunks.
      tokens = parse(text as string);
    } catch (err) {
      throw new NotJsonError(err);
    }
    router.consumeAll(tokens);
  };
  for await (const chunk of body) {
    bytesRead += chunk.length;
    router.bytesRead = bytesRead;
    feed(decoder.write(chunk));
  }
  feed(decoder.end());
  feed(none);
  if (!router.finished) throw new NotJsonError(new Error('the answer ended before its JSON did'));
  return { value: router.root, keptBytes: router.keptBytes, bytesRead, items: router.items };
}

class KeptRouter {
  private readonly stack: Frame[] = [];
  root: unknown = undefined;
  finished = false;
  keptBytes = 0;
  items = 0;
  bytesRead = 0;

  constructor(
    private readonly shape: KeptShape,
    private readonly maxKeptBytes: number,
  ) {}

  /** The parser answers a chunk with `none` or stream-chain's many([...tokens]). */
  consumeAll(out: unknown): void {
    if (isMany(out)) for (const token of getManyValues(out) as Token[]) this.consume(token);
  }

  private consume(token: Token): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) return this.startValue(this.finished ? undefined : this.shape, token);
    switch (top.kind) {
      case 'skip':
        if (token.name === 'startObject' || token.name === 'startArray') top.depth += 1;
        else if (token.name === 'endObject' || token.name === 'endArray') top.depth -= 1;
        if (top.depth === 0) this.stack.pop();
        return;
      case 'whole':
        top.asm.consume(token);
        if (top.asm.done) {
          this.stack.pop();
          this.keepWhole(top.asm.current);
        }
        return;
      case 'object':
        if (token.name === 'keyValue') {
          top.key = token.value;
          top.next = isSecretFieldName(token.value) ? undefined : (top.shape[token.value] ?? top.shape[ANY_KEY]);
          return;
        }
        if (token.name === 'endObject') return this.close();
        return this.startValue(top.next, token);
      case 'array':
        if (token.name === 'endArray') return this.close();
        return this.startValue(top.item, token);
    }
  }

  private startValue(shape: KeptShape | undefined, token: Token): void {
    const opens = token.name === 'startObject' || token.name === 'startArray';
    if (shape === undefined) {
      if (opens) this.stack.push({ kind: 'skip', depth: 1 });
      return;
    }
    if (token.name === 'startObject' && typeof shape === 'object' && !Array.isArray(shape)) {
      this.stack.push({ kind: 'object', shape: shape as Record<string, KeptShape>, value: {}, key: '', next: undefined });
      this.count(2);
      return;
    }
    if (token.name === 'startArray' && Array.isArray(shape)) {
      this.stack.push({ kind: 'array', item: shape[0] as KeptShape, value: [] });
      this.count(2);
      return;
    }
    if (opens) {
      // `true`, or MAAS sent another shape than expected: keep the value whole (still counted).
      const asm = new Assembler();
      asm.consume(token);
      this.stack.push({ kind: 'whole', asm });
      return;
    }
    this.keepScalar(token);
  }

  private keepScalar(token: Token): void {
    switch (token.name) {
      case 'stringValue':
        this.count(token.value.length + 3);
        return this.deliver(flat(token.value));
      case 'numberValue':
        this.count(token.value.length + 1);
        return this.deliver(Number(token.value));
      case 'nullValue':
        this.count(5);
        return this.deliver(null);
      case 'trueValue':
        this.count(5);
        return this.deliver(true);
      case 'falseValue':
        this.count(6);
        return this.deliver(false);
      default:
        return;
    }
  }

  /** A whole subtree: secret fields dropped, strings copied out of the parser's buffer, its JSON size counted. */
  private keepWhole(value: unknown): void {
    const text = JSON.stringify(withoutSecretFields(value));
    this.count(text.length + 1);
    this.deliver(JSON.parse(text) as unknown);
  }

  private close(): void {
    const done = this.stack.pop() as Extract<Frame, { kind: 'object' | 'array' }>;
    this.deliver(done.value);
  }

  private deliver(value: unknown): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      this.root = value;
      this.finished = true;
      return;
    }
    if (parent.kind === 'object') {
      this.count(parent.key.length + 3);
      parent.value[parent.key] = value;
    } else if (parent.kind === 'array') {
      parent.value.push(value);
      if (this.stack.length === 1) this.items += 1;
    }
  }

  private count(bytes: number): void {
    this.keptBytes += bytes;
    if (this.keptBytes > this.maxKeptBytes) throw new KeptTooLargeError(this.maxKeptBytes, this.items, this.bytesRead);
  }
}

/**
 * The parser's strings are slices of the text it was given; a kept one would hold that whole
 * chunk in memory. A round trip through a Buffer makes an independent copy.
 */
function flat(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}
