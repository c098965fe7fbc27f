import { isPunct, type Token } from './lexer.ts';
import { colonHex, keyword } from './words.ts';

/**
 * A condition of an `if` or a class's `match if`, judged for a client the way dhcpd 4.4 evaluates
 * it (common/tree.c evaluate_boolean_expression; dhcp-eval(5)). dhcpd's own results are true,
 * false and null (`and` is null as soon as its left side is not true; `not null` is null; `if`
 * and `match` treat null as false); `unknown` is this reading's: it depends on what the client
 * sends and the facts do not say.
 */
export type Truth = 'true' | 'false' | 'null' | 'unknown';

/** What is known of the client a condition is judged for. */
export interface ClientFacts {
  /** Its hardware address (ethernet); undefined for "any node". */
  mac?: string;
  /** Options (dhcp space, by name) it is known to send. */
  sends: ReadonlySet<string>;
  /** Everything it sends is in `sends`: any other option is absent (null), not unknown. */
  sendsOnly: boolean;
}

/**
 * Any node: every DHCP client sends a parameter request list (RFC 2132 §9.8, RFC 2131 §4.4.1
 * SHOULD; PXE ROMs, dhclient, systemd-networkd all do); nothing else is assumed.
 */
export const ANY_NODE: ClientFacts = { sends: new Set(['dhcp-message-type', 'dhcp-parameter-request-list']), sendsOnly: false };

type Data = { bytes: number[] } | 'null' | 'unknown';

const UNKNOWN_BOOLEANS = new Set(['known', 'static']);

/** Nesting beyond this (`not not …`, `((…))`) is judged unknown rather than recursed into. */
const MAX_NESTING = 100;

class Evaluator {
  #at = 0;
  #depth = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly facts: ClientFacts,
  ) {}

  run(): Truth {
    const truth = this.#or();
    return this.#at === this.tokens.length ? truth : 'unknown';
  }

  #peek(offset = 0): Token | undefined {
    return this.tokens[this.#at + offset];
  }

  #take(): Token | undefined {
    return this.tokens[this.#at++];
  }

  #or(): Truth {
    let left = this.#and();
    while (keyword([this.#peek() as Token]) === 'or') {
      this.#take();
      const right = this.#and();
      left = left === 'true' ? 'true' : left === 'unknown' || right === 'unknown' ? 'unknown' : right === 'true' ? 'true' : left === 'null' && right === 'null' ? 'null' : 'false';
    }
    return left;
  }

  #and(): Truth {
    let left = this.#not();
    while (keyword([this.#peek() as Token]) === 'and') {
      this.#take();
      const right = this.#not();
      left = left === 'unknown' ? 'unknown' : left !== 'true' ? 'null' : right;
    }
    return left;
  }

  #nested<T>(inner: () => T, tooDeep: T): T {
    if (++this.#depth > MAX_NESTING) {
      this.#at = this.tokens.length;
      return tooDeep;
    }
    try {
      return inner();
    } finally {
      this.#depth--;
    }
  }

  #not(): Truth {
    if (keyword([this.#peek() as Token]) !== 'not') return this.#primary();
    this.#take();
    const inner = this.#nested(() => this.#not(), 'unknown' as Truth);
    return inner === 'true' ? 'false' : inner === 'false' ? 'true' : inner;
  }

  #primary(): Truth {
    const token = this.#peek();
    const word = token ? keyword([token]) : '';
    if (isPunct(token, '(')) {
      const start = this.#at;
      this.#take();
      const inner = this.#nested(() => this.#or(), 'unknown' as Truth);
      if (isPunct(this.#peek(), ')') && !this.#comparisonAt(1)) {
        this.#take();
        return inner;
      }
      this.#at = start;
    }
    if (word === 'exists') {
      this.#take();
      const name = this.#optionName();
      if (this.facts.sends.has(name)) return 'true';
      return this.facts.sendsOnly ? 'false' : 'unknown';
    }
    if (UNKNOWN_BOOLEANS.has(word)) {
      this.#take();
      return 'unknown';
    }
    return this.#comparison();
  }

  #comparisonAt(offset: number): boolean {
    const t = this.#peek(offset);
    return isPunct(t, '=') || (isPunct(t, '!') && isPunct(this.#peek(offset + 1), '=')) || (isPunct(t, '~') && (isPunct(this.#peek(offset + 1), '=') || isPunct(this.#peek(offset + 1), '~')));
  }

  #operator(): string | undefined {
    if (!this.#comparisonAt(0)) return undefined;
    const first = this.#take()?.text ?? '';
    return first === '=' ? '=' : `${first}${this.#take()?.text ?? ''}`;
  }

  /** `=` and `!=` (tree.c expr_equal): two nulls are equal, a null and a value are not; `~=` and `~~` are regular expressions, not judged here. */
  #comparison(): Truth {
    const left = this.#data();
    const op = this.#operator();
    if (!op) return 'unknown';
    const right = this.#data();
    if ((op !== '=' && op !== '!=') || left === 'unknown' || right === 'unknown') return 'unknown';
    const same = left === 'null' || right === 'null' ? left === right : left.bytes.length === right.bytes.length && left.bytes.every((b, i) => b === right.bytes[i]);
    return same === (op === '=') ? 'true' : 'false';
  }

  #optionName(): string {
    const first = keyword([this.#take() as Token]);
    if (isPunct(this.#peek(), '.')) {
      this.#take();
      const name = keyword([this.#take() as Token]);
      return first === 'dhcp' ? name : `${first}.${name}`;
    }
    return first;
  }

  #number(): number | undefined {
    const t = this.#take();
    return t?.kind === 'word' && /^\d+$/.test(t.text) ? Number(t.text) : undefined;
  }

  #expect(char: string): boolean {
    if (!isPunct(this.#peek(), char)) return false;
    this.#take();
    return true;
  }

  #data(): Data {
    const token = this.#peek();
    if (!token) return 'unknown';
    if (token.kind === 'string') {
      this.#take();
      return { bytes: [...Buffer.from(token.text, 'latin1')] };
    }
    const word = keyword([token]);
    if (word === 'hardware') {
      this.#take();
      return this.facts.mac ? { bytes: [1, ...(this.facts.mac.split(':').map((h) => parseInt(h, 16)))] } : 'unknown';
    }
    if (word === 'option') {
      this.#take();
      const name = this.#optionName();
      if (this.facts.sends.has(name)) return 'unknown';
      return this.facts.sendsOnly ? 'null' : 'unknown';
    }
    if (word === 'substring' || word === 'suffix') return this.#nested(() => this.#slice(word), 'unknown' as Data);
    if (isPunct(token, '(')) {
      this.#take();
      const inner = this.#nested(() => this.#data(), 'unknown' as Data);
      return this.#expect(')') ? inner : 'unknown';
    }
    const hex = this.#hexList();
    if (hex) return { bytes: hex };
    this.#skipCall();
    return 'unknown';
  }

  /** `substring (data, offset, length)`, `suffix (data, length)`: null in, null out (dhcp-eval(5)). */
  #slice(word: string): Data {
    this.#take();
    if (!this.#expect('(')) return 'unknown';
    const data = this.#data();
    if (!this.#expect(',')) return 'unknown';
    const first = this.#number();
    const second = word === 'substring' ? (this.#expect(',') ? this.#number() : undefined) : first;
    if (!this.#expect(')') || first === undefined || second === undefined) return 'unknown';
    if (data === 'null' || data === 'unknown') return data;
    return { bytes: word === 'substring' ? data.bytes.slice(first, first + second) : data.bytes.slice(Math.max(0, data.bytes.length - first)) };
  }

  #hexList(): number[] | undefined {
    let end = this.#at;
    while (end < this.tokens.length && ((end - this.#at) % 2 === 0 ? this.tokens[end]?.kind === 'word' : isPunct(this.tokens[end], ':'))) {
      end++;
      if (end - this.#at > 2 * 4096) break;
    }
    if ((end - this.#at) % 2 === 0) end--;
    if (end - this.#at < 3) return undefined;
    const bytes = colonHex(this.tokens.slice(this.#at, end));
    if (bytes) this.#at = end;
    return bytes;
  }

  /** A function this reading does not evaluate (`binary-to-ascii (…)`, `leased-address`): step over it. */
  #skipCall(): void {
    this.#take();
    if (!isPunct(this.#peek(), '(')) return;
    let depth = 0;
    do {
      const t = this.#take();
      if (isPunct(t, '(')) depth++;
      if (isPunct(t, ')')) depth--;
      if (!t) return;
    } while (depth > 0);
  }
}

export function evaluateCondition(tokens: readonly Token[], facts: ClientFacts): Truth {
  return new Evaluator(tokens, facts).run();
}
