import type { ClientClass, DhcpdConf, Exec, Group, Host, IfChain, Pool, SharedNetwork, Subnet, Where } from './conf-model.ts';
import { Lexer, type Token, isPunct } from './lexer.ts';
import { declarationStatement, executableStatement, namesOption6, type StatementContext } from './statements.ts';
import { keyword, shortText, wordsText } from './words.ts';
import { subnetHeader } from './subnet-header.ts';
import type { Frame } from './frame.ts';
import { DEFAULT_PARSE_LIMITS, type ParseLimits } from './parse-limits.ts';
import { keepFirst } from './keep-first.ts';

export type IncludeFile = { text: string } | { unread: string };

export type ParseResult = { ok: true; conf: DhcpdConf } | { ok: false; reason: string };

class LimitExceeded extends Error {}

interface Source {
  lexer: Lexer;
  file: string;
  /** frames.length when this file began: an include is parsed in the scope of its `include` line. */
  depth: number;
}

/** Reads a dhcpd.conf (and the `include` files given) as ISC dhcpd 4.4 does, into the scopes that decide DHCP option 6. */
export function parseDhcpdConf(main: { path: string; text: string }, includes: ReadonlyMap<string, IncludeFile> = new Map(), limits: ParseLimits = DEFAULT_PARSE_LIMITS): ParseResult {
  try {
    return { ok: true, conf: new Reader(main, includes, limits).read() };
  } catch (err) {
    if (err instanceof LimitExceeded) return { ok: false, reason: err.message };
    throw err;
  }
}

class Reader implements StatementContext {
  readonly conf: DhcpdConf;
  readonly frames: Frame[];
  readonly aliases = new Set<string>();
  readonly #sources: Source[];
  readonly #names = new Set<string>();
  #nodes = 0;
  #chars: number;
  #includes = 0;
  /** The `if` chain whose block just closed: only an `elsif` or `else` right after it continues it. */
  #lastIf: IfChain | undefined;

  constructor(
    main: { path: string; text: string },
    private readonly includeFiles: ReadonlyMap<string, IncludeFile>,
    readonly limits: ParseLimits,
  ) {
    const at = { file: main.path, line: 1 };
    const root: Group = { parent: undefined, statements: [], label: 'global', at };
    this.conf = { root, subnets: [], hosts: [], classes: [], refusals: [], moreRefusals: 0, unread: [], moreUnread: 0, wanted: [], names: [] };
    this.frames = [{ declType: 'root', executable: false, group: root, exec: root.statements, header: 'global', at }];
    this.#chars = main.text.length;
    if (this.#chars > limits.maxChars) throw new LimitExceeded(`${main.path} is ${main.text.length} characters, over the ${limits.maxChars} this reading holds`);
    this.#sources = [{ lexer: new Lexer(main.text, limits.maxProblemsKept), file: main.path, depth: 1 }];
  }

  read(): DhcpdConf {
    let words: Token[] = [];
    let started: Where | undefined;
    for (;;) {
      const source = this.#sources.at(-1);
      if (!source) break;
      const token = source.lexer.next();
      const at = { file: source.file, line: token.line };
      if (token.kind === 'eof') {
        if (words.length) this.refuse(started ?? at, `\`${firstWord(words)}\` has no closing ';' before the end of ${source.file}`);
        words = [];
        this.#endSource(source);
        continue;
      }
      if (isPunct(token, ';')) {
        if (words.length) this.#statement(words, started ?? at);
        words = [];
        continue;
      }
      if (isPunct(token, '{')) {
        this.#open(words, started ?? at);
        words = [];
        continue;
      }
      if (isPunct(token, '}')) {
        if (words.length) this.refuse(started ?? at, `\`${firstWord(words)}\` has no closing ';' before '}'`);
        words = [];
        this.#close(source, at);
        continue;
      }
      if (words.length === 0) started = at;
      if (words.length >= this.limits.maxStatementTokens) throw new LimitExceeded(`a statement at ${at.file}:${started?.line ?? at.line} runs over ${this.limits.maxStatementTokens} tokens`);
      words.push(token);
    }
    return this.conf;
  }

  get frame(): Frame {
    return this.frames.at(-1) as Frame;
  }

  refuse(at: Where, reason: string): void {
    this.conf.moreRefusals += keepFirst(this.conf.refusals, { at, reason }, this.limits.maxProblemsKept);
  }

  addName(name: string): void {
    if (this.#names.has(name)) return;
    this.#names.add(name);
    this.conf.names.push(name);
  }

  #unread(at: Where, reason: string): void {
    this.conf.moreUnread += keepFirst(this.conf.unread, { at, reason }, this.limits.maxProblemsKept);
  }

  count(at: Where): void {
    if (++this.#nodes > this.limits.maxNodes) throw new LimitExceeded(`more than ${this.limits.maxNodes} declarations and option statements (at ${at.file}:${at.line})`);
  }

  newGroup(parent: Group, label: string, at: Where): Group {
    this.count(at);
    return { parent, statements: [], label, at };
  }

  include(path: string, at: Where): void {
    if (this.#sources.some((s) => s.file === path)) {
      this.#unread(at, `\`include "${path}"\` includes a file already being read (a loop): not followed`);
      return;
    }
    const file = this.includeFiles.get(path);
    if (!file) {
      this.conf.wanted.push({ path, at });
      return;
    }
    if ('unread' in file) {
      this.#unread(at, `\`include "${path}"\` could not be read (${file.unread}): what it sets is unknown`);
      return;
    }
    if (++this.#includes > this.limits.maxIncludes || this.#sources.length > this.limits.maxIncludeDepth) {
      this.#unread(at, `\`include "${path}"\` not followed: more than ${this.limits.maxIncludes} include files, or nested more than ${this.limits.maxIncludeDepth} deep`);
      return;
    }
    this.#chars += file.text.length;
    if (this.#chars > this.limits.maxChars) throw new LimitExceeded(`the file and its includes are over the ${this.limits.maxChars} characters this reading holds (at ${path})`);
    this.#sources.push({ lexer: new Lexer(file.text, this.limits.maxProblemsKept), file: path, depth: this.frames.length });
  }

  #endSource(source: Source): void {
    for (const p of source.lexer.problems) this.refuse({ file: source.file, line: p.line }, p.reason);
    this.conf.moreRefusals += source.lexer.moreProblems;
    if (this.frames.length > source.depth) {
      const open = this.frames[source.depth] as Frame;
      this.refuse(open.at, `\`${open.header} {\` is not closed before the end of ${source.file} (dhcpd: "unexpected end of file")`);
      while (this.frames.length > source.depth) this.#pop();
    }
    this.#sources.pop();
    this.#lastIf = undefined;
  }

  #statement(words: Token[], at: Where): void {
    this.#lastIf = undefined;
    const frame = this.frame;
    if (frame.opaque) {
      if (namesOption6(words, this.aliases)) this.#unread(at, `\`${shortText(words)};\` is inside \`${frame.opaque} {\`, which this reading does not model: not counted`);
      return;
    }
    if (frame.switchBody) words = withoutCaseLabel(words);
    if (!words.length) return;
    if (frame.executable) executableStatement(this, words, at);
    else declarationStatement(this, words, at);
  }

  #open(header: Token[], at: Where): void {
    if (this.frames.length >= this.limits.maxDepth) throw new LimitExceeded(`blocks nested more than ${this.limits.maxDepth} deep (at ${at.file}:${at.line})`);
    const lastIf = this.#lastIf;
    this.#lastIf = undefined;
    const frame = this.frame;
    const word = keyword(header);
    const text = wordsText(header.slice(0, 12));
    this.count(at);
    const inherit = (extra: Partial<Frame>): Frame => childFrame(frame, text, at, extra);
    if (frame.opaque) return void this.frames.push(inherit({ opaque: frame.opaque }));
    if (word === 'if' || word === 'elsif' || word === 'else') return void this.frames.push(this.#branch(word, header, at, lastIf, inherit));
    if (word === 'on' || word === 'switch') {
      const opaque = { kind: 'opaque' as const, what: text, body: [], at };
      frame.exec.push(opaque);
      return void this.frames.push(inherit({ executable: true, exec: opaque.body, switchBody: word === 'switch' }));
    }
    if (frame.executable) {
      this.refuse(at, `\`${text} {\` inside \`${frame.header}\`: only statements may appear there (dhcpd: "expecting a parameter or declaration")`);
      return void this.frames.push(inherit({ opaque: text }));
    }
    this.frames.push(this.#declaration(word, header, text, at, inherit));
  }

  #branch(word: string, header: Token[], at: Where, lastIf: IfChain | undefined, inherit: (extra: Partial<Frame>) => Frame): Frame {
    const frame = this.frame;
    const conditionWords = word === 'else' ? (keyword(header, 1) === 'if' ? header.slice(2) : undefined) : header.slice(1);
    const condition = conditionWords ? { tokens: conditionWords, text: shortText(conditionWords), at } : undefined;
    if (word === 'if') {
      const chain: IfChain = { kind: 'if', branches: [{ ...(condition ? { condition } : {}), body: [] }], at };
      frame.exec.push(chain);
      return inherit({ executable: true, exec: chain.branches[0]?.body ?? [], ifChain: chain });
    }
    const open = lastIf && lastIf.branches.at(-1)?.condition !== undefined;
    if (!lastIf || !open) {
      this.refuse(at, `\`${word}\` with no \`if\` block right before it (dhcpd: "expecting a parameter or declaration")`);
      return inherit({ opaque: word });
    }
    const branch = { ...(condition ? { condition } : {}), body: [] as Exec[] };
    lastIf.branches.push(branch);
    return inherit({ executable: true, exec: branch.body, ifChain: lastIf });
  }

  #declaration(word: string, header: Token[], text: string, at: Where, inherit: (extra: Partial<Frame>) => Frame): Frame {
    const frame = this.frame;
    const { declType } = frame;
    const notHere = (what: string, rule: string) => {
      this.refuse(at, `\`${text}\` inside \`${frame.header}\`: ${what} (dhcpd: "${rule}")`);
      return inherit({ opaque: text });
    };
    switch (word) {
      case 'group': {
        if (declType === 'host' || declType === 'class') return notHere('a group cannot be declared here', 'group declarations not allowed here.');
        const group = this.newGroup(frame.group, 'group', at);
        return inherit({ declType: 'group', group, exec: group.statements, share: undefined, subnet: undefined, pool: undefined, host: undefined, klass: undefined });
      }
      case 'shared-network': {
        if (declType === 'shared-network' || declType === 'host' || declType === 'subnet' || declType === 'class') return notHere('a shared-network cannot be declared here', 'shared-network parameters not allowed here');
        const name = header[1]?.text ?? '?';
        const group = this.newGroup(frame.group, `shared-network ${name}`, at);
        const share: SharedNetwork = { name, implicit: false, group, subnets: [], pools: [], at };
        return inherit({ declType: 'shared-network', group, exec: group.statements, share, subnet: undefined, pool: undefined });
      }
      case 'subnet':
        return this.#subnet(header, text, at, inherit, notHere);
      case 'subnet6':
      case 'pool6':
        return notHere('DHCPv6 declarations are refused by a DHCPv4 server (dhcpd -4)', `${word} statement is only supported in DHCPv6 mode.`);
      case 'pool': {
        if (declType !== 'subnet' && declType !== 'shared-network') return notHere('a pool belongs directly in a subnet or shared-network', declType === 'pool' ? 'pool declared within pool.' : 'pool declared outside of network');
        const share = (declType === 'subnet' ? frame.subnet?.share : frame.share) as SharedNetwork;
        const group = this.newGroup(share.group, 'pool', at);
        const pool: Pool = { share, group, ranges: [], anonymous: false, at };
        share.pools.push(pool);
        return inherit({ declType: 'pool', group, exec: group.statements, pool });
      }
      case 'host': {
        if (declType === 'host' || declType === 'class') return notHere('a host cannot be declared here', 'host declarations not allowed here.');
        const name = header[1]?.text ?? '?';
        const group = this.newGroup(frame.group, `host ${name}`, at);
        const host: Host = { name, group, fixed: [], identifiedOtherwise: false, at };
        this.conf.hosts.push(host);
        return inherit({ declType: 'host', group, exec: group.statements, host });
      }
      case 'class':
      case 'subclass':
      case 'vendor-class':
      case 'user-class': {
        if (declType === 'class') return notHere('a class cannot be declared inside a class', 'class declarations not allowed here.');
        const name = wordsText(header.slice(1));
        const group = this.newGroup(frame.group, `${word} ${name}`, at);
        const klass: ClientClass = { name: `${word} ${name}`, group, at };
        this.conf.classes.push(klass);
        return inherit({ declType: 'class', group, exec: group.statements, klass });
      }
      default:
        return inherit({ opaque: text });
    }
  }

  #subnet(header: Token[], text: string, at: Where, inherit: (extra: Partial<Frame>) => Frame, notHere: (what: string, rule: string) => Frame): Frame {
    const frame = this.frame;
    if (frame.declType === 'host' || frame.declType === 'subnet' || frame.declType === 'class') return notHere('a subnet cannot be declared here', 'subnet declarations not allowed here.');
    const parsed = subnetHeader(header);
    if ('problem' in parsed) {
      this.refuse(at, `\`${text}\`: ${parsed.problem}`);
      return inherit({ opaque: text });
    }
    // Only directly inside a shared-network does a subnet join it; anywhere else (a group inside one
    // included) dhcpd makes it a shared network of its own (confpars.c: clone_group copies no shared_network).
    const explicit = frame.declType === 'shared-network' ? frame.share : undefined;
    const label = `subnet ${parsed.cidr}`;
    const share: SharedNetwork = explicit ?? { name: parsed.cidr, implicit: true, group: this.newGroup(frame.group, label, at), subnets: [], pools: [], at };
    const group = explicit ? this.newGroup(explicit.group, label, at) : share.group;
    const subnet: Subnet = { cidr: parsed.cidr, network: parsed.network, mask: parsed.mask, group, share, at };
    share.subnets.push(subnet);
    this.conf.subnets.push(subnet);
    return inherit({ declType: 'subnet', group, exec: group.statements, share, subnet, pool: undefined });
  }

  #close(source: Source, at: Where): void {
    if (this.frames.length <= source.depth) {
      this.refuse(at, source.depth === 1 ? "a '}' with no block open (dhcpd: \"expecting a parameter or declaration\")" : `a '}' in ${source.file} closes a block its include line is in (dhcpd reads an include on its own)`);
      return;
    }
    const closed = this.#pop();
    this.#lastIf = closed.ifChain;
  }

  #pop(): Frame {
    const closed = this.frames.pop() as Frame;
    if (closed.opaque) return closed;
    if (closed.declType === 'pool' && closed.pool && this.frame.pool !== closed.pool && closed.pool.ranges.length === 0) {
      this.refuse(closed.at, 'a pool with no range (dhcpd: "Pool declaration with no address range.")');
    }
    if (closed.declType === 'shared-network' && closed.share && this.frame.share !== closed.share && closed.share.subnets.length === 0) {
      this.refuse(closed.at, `shared-network ${closed.share.name} declares no subnet directly (dhcpd: "empty shared-network decl"; a subnet inside a group there does not count)`);
    }
    return closed;
  }
}

/**
 * In a `switch` body, `case <value>:` and `default:` label the statement after them; a case value
 * may be colon-separated hex (`case 00:07:`), so the label ends at the first colon followed by a word
 * that is not a hex byte.
 */
function withoutCaseLabel(words: Token[]): Token[] {
  const word = keyword(words);
  if (word !== 'case' && !(word === 'default' && isPunct(words[1], ':'))) return words;
  const start = words.findIndex((w, i) => i > 0 && isPunct(words[i - 1], ':') && w.kind === 'word' && !/^[0-9a-f]{1,2}$/i.test(w.text));
  return start < 0 ? [] : words.slice(start);
}

/** A statement named by its first word only: a key's `secret "…"` never reaches a message. */
function firstWord(words: readonly Token[]): string {
  return words[0]?.kind === 'word' ? `${words[0].text} …` : '…';
}

/** A block's frame: what it sets in `extra`, the rest as its parent has it (one fixed shape, built field by field: object spread made this the reading's hot spot). */
function childFrame(parent: Frame, header: string, at: Where, extra: Partial<Frame>): Frame {
  const pick = <K extends keyof Frame>(key: K): Frame[K] => (key in extra ? extra[key] : parent[key]) as Frame[K];
  return {
    declType: pick('declType'),
    executable: pick('executable'),
    opaque: extra.opaque,
    group: pick('group'),
    exec: pick('exec'),
    share: pick('share'),
    subnet: pick('subnet'),
    pool: pick('pool'),
    host: pick('host'),
    klass: pick('klass'),
    ifChain: extra.ifChain,
    switchBody: extra.switchBody ?? false,
    header,
    at,
  };
}
