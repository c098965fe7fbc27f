import type { DhcpdConf, Option6Set, Pool, SetOp, Where } from './conf-model.ts';
import { isPunct, type Token } from './lexer.ts';
import { inNetwork, ipv4Text } from './ipv4.ts';
import type { DeclType, Frame } from './frame.ts';
import type { ParseLimits } from './parse-limits.ts';
import { colonHex, dottedQuad, keyword, macText, serverEntry, shortText, splitCommas, wordsText } from './words.ts';

/** What a statement may read and change of the reading in progress. */
export interface StatementContext {
  readonly conf: DhcpdConf;
  readonly frame: Frame;
  readonly aliases: Set<string>;
  readonly limits: ParseLimits;
  refuse(at: Where, reason: string): void;
  count(at: Where): void;
  include(path: string, at: Where): void;
  /** Keeps a host name of an option 6 value for the rack to resolve, once however often it is written. */
  addName(name: string): void;
}

/**
 * The statements that set an option (common/parse.c parse_executable_statement): `option` and
 * `supersede` (and `send`) replace it, `default` sets it only when unset, `prepend` and `append`
 * add to what is set (common/options.c set_option).
 */
const SET_OPS: Record<string, SetOp> = { option: 'supersede', supersede: 'supersede', send: 'supersede', default: 'default', prepend: 'prepend', append: 'append' };

/** DHCP option 6's name in the dhcp option space (dhcp-options(5)); `dhcp.domain-name-servers` is the same option. */
const OPTION6 = 'domain-name-servers';

/** A parameter or declaration statement (`…;`) directly in a declaration's block. */
export function declarationStatement(ctx: StatementContext, words: Token[], at: Where): void {
  const word = keyword(words);
  const { frame } = ctx;
  switch (word) {
    case 'include':
      if (words[1]?.kind === 'string' && words.length === 2) ctx.include(words[1].text, at);
      else ctx.refuse(at, '`include` takes one quoted file name (dhcpd: "filename string expected.")');
      return;
    case 'range':
      return rangeStatement(ctx, words, at);
    case 'range6':
    case 'prefix6':
      return ctx.refuse(at, `\`${word}\` in a DHCPv4 configuration (dhcpd: "${word} declaration not allowed here.")`);
    case 'hardware':
      return onlyIn(ctx, 'host', words, at, () => {
        const bytes = colonHex(words.slice(2));
        if (frame.host && keyword(words, 1) === 'ethernet' && bytes) frame.host.mac = macText(bytes);
      });
    case 'fixed-address':
      return onlyIn(ctx, 'host', words, at, () => {
        const entries = splitCommas(words.slice(1)).map(serverEntry);
        if (frame.host && entries.every((e) => e !== undefined)) frame.host.fixed = entries;
      });
    case 'host-identifier':
      if (frame.host) frame.host.identifiedOtherwise = true;
      return;
    case 'match':
      if (frame.klass && keyword(words, 1) === 'if') frame.klass.match = { tokens: words.slice(2), text: shortText(words.slice(2)), at };
      return;
    default:
      if (word === 'option' && (keyword(words, 1) === 'space' || words.some((w) => keyword([w]) === 'code'))) return optionDefinition(ctx, words, at);
      executableStatement(ctx, words, at);
  }
}

/** A statement that runs when a client is answered: only the ones that set option 6 are kept. */
export function executableStatement(ctx: StatementContext, words: Token[], at: Where): void {
  const set = option6Set(ctx, words, at);
  if (!set) return;
  ctx.count(at);
  ctx.frame.exec.push(set);
}

/** Whether a statement sets option 6, by any of the names dhcpd knows it by. */
export function namesOption6(words: readonly Token[], aliases: ReadonlySet<string>): boolean {
  return optionName(words, aliases)?.isOption6 ?? false;
}

function optionName(words: readonly Token[], aliases: ReadonlySet<string>): { isOption6: boolean; keyword: string; rest: Token[] } | undefined {
  const word = keyword(words);
  if (!(word in SET_OPS) || (word === 'default' && isPunct(words[1], ':'))) return undefined;
  const dotted = isPunct(words[2], '.');
  const universe = dotted ? keyword(words, 1) : 'dhcp';
  const name = keyword(words, dotted ? 3 : 1);
  const isOption6 = universe === 'dhcp' && (name === OPTION6 || aliases.has(name));
  return { isOption6, keyword: wordsText(words.slice(0, dotted ? 4 : 2)), rest: words.slice(dotted ? 4 : 2) };
}

function option6Set(ctx: StatementContext, words: Token[], at: Where): Option6Set | undefined {
  const named = optionName(words, ctx.aliases);
  if (!named?.isOption6) return undefined;
  const op = SET_OPS[keyword(words)] as SetOp;
  const text = `${shortText(words)};`;
  if (isPunct(named.rest[0], '=')) return { kind: 'set', op, entries: [], expression: shortText(named.rest.slice(1)), text, at };
  const entries = splitCommas(named.rest).map(serverEntry);
  if (named.rest.length === 0 || entries.some((e) => e === undefined)) {
    ctx.refuse(at, `\`${named.keyword}\` needs IP addresses or host names separated by commas (dhcpd: "expecting IP address or hostname")`);
    return undefined;
  }
  const kept = entries.filter((e) => e !== undefined);
  for (const e of kept) if ('name' in e) ctx.addName(e.name);
  return { kind: 'set', op, entries: kept, text, at };
}

/** `option space …;` and `option <name> code <n> = …;` may only be global; a new name for code 6 is option 6 too. */
function optionDefinition(ctx: StatementContext, words: Token[], at: Where): void {
  if (ctx.frame.declType !== 'root' || ctx.frame.executable) {
    ctx.refuse(at, `\`${wordsText(words.slice(0, 4))}\` defines an option inside \`${ctx.frame.header}\` (dhcpd: "option definitions may not be scoped.")`);
    return;
  }
  const codeAt = words.findIndex((w) => keyword([w]) === 'code');
  const dotted = isPunct(words[2], '.');
  const universe = dotted ? keyword(words, 1) : 'dhcp';
  if (universe === 'dhcp' && codeAt > 0 && words[codeAt + 1]?.text === '6') ctx.aliases.add(keyword(words, dotted ? 3 : 1));
}

function onlyIn(ctx: StatementContext, declType: DeclType, words: Token[], at: Where, then: () => void): void {
  if (ctx.frame.declType === declType && !ctx.frame.executable) then();
  else ctx.refuse(at, `\`${keyword(words)}\` outside a ${declType} declaration (dhcpd: "${keyword(words)} parameter not allowed here.")`);
}

/**
 * `range [dynamic-bootp] <low> [<high>];` (server/confpars.c parse_address_range): directly in a
 * subnet it joins an anonymous pool of the subnet's shared network; in a pool, the range belongs to
 * the subnet that contains its low address, which must be declared before the pool.
 */
function rangeStatement(ctx: StatementContext, words: Token[], at: Where): void {
  const { frame } = ctx;
  const addresses = keyword(words, 1) === 'dynamic-bootp' ? words.slice(2) : words.slice(1);
  const low = dottedQuad(addresses.slice(0, 7));
  const high = addresses.length === 7 ? low : dottedQuad(addresses.slice(7));
  if (low === undefined || high === undefined || (addresses.length !== 7 && addresses.length !== 14)) {
    ctx.refuse(at, '`range` takes one or two dotted-quad addresses (dhcpd: parse error)');
    return;
  }
  const inPool = frame.declType === 'pool' && !frame.executable;
  if (!(inPool || (frame.declType === 'subnet' && !frame.executable))) {
    ctx.refuse(at, `\`range\` inside \`${frame.header}\` (dhcpd: "range declaration not allowed here.")`);
    return;
  }
  const share = frame.subnet?.share ?? frame.share ?? frame.pool?.share;
  const subnet = frame.subnet ?? share?.subnets.find((s) => inNetwork(low, s.network, s.mask));
  if (!share || !subnet) {
    ctx.refuse(at, `\`range ${ipv4Text(low)}\` is in no subnet declared before it in ${share ? `shared-network ${share.name}` : 'this block'} (dhcpd: "address range not on network")`);
    return;
  }
  const pool = inPool ? frame.pool : anonymousPool(ctx, share, at);
  pool?.ranges.push({ low, high, text: `${ipv4Text(low)}-${ipv4Text(high)}`, subnet, at });
}

function anonymousPool(ctx: StatementContext, share: Pool['share'], at: Where): Pool {
  const existing = share.pools.find((p) => p.anonymous);
  if (existing) return existing;
  ctx.count(at);
  const pool: Pool = { share, group: { parent: share.group, statements: [], label: 'pool', at }, ranges: [], anonymous: true, at };
  share.pools.push(pool);
  return pool;
}
