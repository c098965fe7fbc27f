import { groupSetsOption6, option6For, setsOption6, type Decide, type Option6Outcome, type Placement } from './client-option6.ts';
import { ANY_NODE, evaluateCondition, type ClientFacts } from './condition.ts';
import { whereText, type ClientClass, type Condition, type DhcpdConf, type Exec, type Group, type Host, type Opaque, type Pool, type Subnet } from './conf-model.ts';
import { inNetwork, ipv4Number, parseIpv4Cidr } from './ipv4.ts';

/** DHCP option 6 as one kind of node on the subnet receives it. */
export interface NodeOption6 {
  /** The servers in the order nodes get them (host names as dhcpd resolves them on the rack, when known). */
  servers: string[];
  /** Host names in the option whose address is not known: dhcpd resolves them itself. */
  unresolved: string[];
  /** Set by an expression dhcpd computes per client (`option domain-name-servers = …;`). */
  expression?: string;
  /** The statements that set it, in the order dhcpd runs them (the last one wins unless it prepends or appends). */
  setBy: { statement: string; at: string; scope: string }[];
}

/** Some nodes get something else: a pool, class, host, `if` or sibling subnet that changes option 6. */
export interface Option6Variant {
  who: string;
  at: string;
  /** null: these nodes get no lease on this subnet. */
  option6: NodeOption6 | null;
}

export interface SubnetOption6 {
  subnet: string;
  /** The declaration dhcpd uses (the last one of this network and mask). */
  declaredAt: string;
  /** What an ordinary dynamic client gets; null when a dynamic client gets no lease here. */
  dynamic: NodeOption6 | null;
  /** What a node with a fixed address here gets before its own host scope (it leases from no pool). */
  fixedAddress: NodeOption6;
  variants: Option6Variant[];
  /** Variants left out of `variants` to keep it short. */
  moreVariants: number;
  notes: string[];
}

export type SubnetOption6Lookup = ({ found: true } & SubnetOption6) | { found: false; problem: string; subnets: string[] };

export interface Option6Options {
  /** Host name → its first IPv4 address as the rack resolves it (undefined: it does not resolve). */
  resolved?: ReadonlyMap<string, string | undefined>;
  maxVariants?: number;
}

/** Which declaration of `cidr` dhcpd uses: the last one (server/mdb.c enter_subnet puts a redeclared subnet first). */
function declarationsOf(conf: DhcpdConf, cidr: string): Subnet[] {
  const wanted = parseIpv4Cidr(cidr);
  if (!wanted) return [];
  return conf.subnets.filter((s) => s.network === wanted.network && s.mask === wanted.mask);
}

/** The pools a dynamic client of `subnet` can lease from, in dhcpd's order (the shared network's pool list). */
function poolsOf(subnet: Subnet): Pool[] {
  return subnet.share.pools.filter((p) => p.ranges.some((r) => r.subnet === subnet));
}

function truthOf(facts: ClientFacts): (c: Condition) => ReturnType<typeof evaluateCondition> {
  const cache = new Map<Condition, ReturnType<typeof evaluateCondition>>();
  return (c) => {
    let t = cache.get(c);
    if (t === undefined) cache.set(c, (t = evaluateCondition(c.tokens, facts)));
    return t;
  };
}

/** What one client gets: for the fixture comparison and `dhcp-check` of a named node. null: no lease. */
export function clientOption6(conf: DhcpdConf, cidr: string, facts: ClientFacts & { mac: string }, options: Option6Options = {}): NodeOption6 | null | undefined {
  const subnet = declarationsOf(conf, cidr).at(-1);
  if (!subnet) return undefined;
  const truth = truthOf(facts);
  const decide: Decide = (c) => truth(c) === 'true';
  const classes = conf.classes.filter((k) => k.match && truth(k.match) === 'true');
  const host = hostFor(conf, subnet, facts.mac);
  const placement = host && host.fixedIn ? { subnet: host.fixedIn, classes, host: host.host } : dynamicPlacement(subnet, classes, host?.host);
  return placement ? nodeOption6(option6For(placement, decide), options) : null;
}

function dynamicPlacement(subnet: Subnet, classes: ClientClass[], host?: Host): Placement | undefined {
  const pool = poolsOf(subnet)[0];
  return pool ? { subnet, pool, classes, ...(host ? { host } : {}) } : undefined;
}

/**
 * dhcpd.conf(5): a host declaration with a fixed-address valid on the client's network first, else
 * one without a fixed-address. The fixed address's subnet is the one the client then lands in.
 */
function hostFor(conf: DhcpdConf, subnet: Subnet, mac: string): { host: Host; fixedIn?: Subnet } | undefined {
  const mine = conf.hosts.filter((h) => h.mac === mac.toLowerCase());
  for (const host of mine) {
    const fixedIn = fixedSubnet(host, subnet);
    if (fixedIn) return { host, fixedIn };
  }
  const dynamic = mine.find((h) => h.fixed.length === 0);
  return dynamic ? { host: dynamic } : undefined;
}

function fixedSubnet(host: Host, subnet: Subnet): Subnet | undefined {
  for (const entry of host.fixed) {
    const address = 'address' in entry ? ipv4Number(entry.address) : undefined;
    const found = address === undefined ? undefined : subnet.share.subnets.find((s) => inNetwork(address, s.network, s.mask));
    if (found) return found;
  }
  return undefined;
}

function nodeOption6(outcome: Option6Outcome, options: Option6Options): NodeOption6 {
  const servers: string[] = [];
  const unresolved: string[] = [];
  for (const entry of outcome.entries ?? []) {
    if ('address' in entry) servers.push(entry.address);
    else {
      const address = options.resolved?.get(entry.name);
      servers.push(address ?? entry.name);
      if (address === undefined) unresolved.push(entry.name);
    }
  }
  return {
    servers,
    unresolved,
    ...(outcome.expression !== undefined ? { expression: outcome.expression } : {}),
    setBy: outcome.applied.map((a) => ({ statement: a.set.text, at: whereText(a.set.at), scope: a.scope })),
  };
}

function sameOption6(a: NodeOption6 | null, b: NodeOption6 | null): boolean {
  if (a === null || b === null) return a === b;
  return a.servers.join(' ') === b.servers.join(' ') && a.expression === b.expression;
}

/**
 * Per node-facing subnet: what an ordinary dynamic client gets (conditions that depend on what the
 * client sends are taken as false for it), then every pool, class, host, `if` branch and sibling
 * subnet of the same shared network that gives some nodes something else, with where it is written.
 */
export function subnetOption6(conf: DhcpdConf, cidr: string, options: Option6Options = {}): SubnetOption6Lookup {
  const declarations = declarationsOf(conf, cidr);
  const subnet = declarations.at(-1);
  if (!subnet) {
    const subnets = [...new Set(conf.subnets.map((s) => s.cidr))];
    return { found: false, problem: `no subnet block for ${cidr} (it has ${subnets.length ? subnets.join(', ') : 'none'})`, subnets };
  }
  const truth = truthOf(ANY_NODE);
  const base: Decide = (c) => truth(c) === 'true';
  const baseClasses = conf.classes.filter((k) => k.match && truth(k.match) === 'true');
  const compute = (placement: Placement | undefined, decide: Decide = base) => (placement ? nodeOption6(option6For(placement, decide), options) : null);
  const pools = poolsOf(subnet);
  const ordinary = pools[0] ? { subnet, pool: pools[0], classes: baseClasses } : undefined;
  const dynamic = compute(ordinary);
  const fixedAddress = compute({ subnet, classes: baseClasses }) as NodeOption6;
  const baseline = dynamic ?? fixedAddress;
  const candidates: { who: string; at: string; option6: NodeOption6 | null }[] = [];
  const consider = (who: string, at: string, option6: NodeOption6 | null) => {
    if (!sameOption6(option6, baseline)) candidates.push({ who, at, option6 });
  };
  for (const pool of pools.slice(1)) consider(`nodes leasing from pool ${pool.ranges.map((r) => r.text).join(', ')}`, whereText(pool.at), compute({ subnet, pool, classes: baseClasses }));
  for (const klass of conf.classes) {
    if (baseClasses.includes(klass) || (klass.match && truth(klass.match) !== 'unknown')) continue;
    if (!ordinary || !groupSetsOption6(klass.group, ordinary.pool.group)) continue;
    const who = klass.match ? `nodes matching ${klass.name} (match if ${klass.match.text})` : `nodes in ${klass.name}`;
    consider(who, whereText(klass.at), compute({ ...ordinary, classes: conf.classes.filter((k) => k === klass || baseClasses.includes(k)) }));
  }
  for (const host of conf.hosts) {
    const fixedIn = fixedSubnet(host, subnet);
    if (host.fixed.length && fixedIn !== subnet) continue;
    const placement = fixedIn ? { subnet, classes: baseClasses, host } : ordinary ? { ...ordinary, host } : undefined;
    const id = host.mac ? `MAC ${host.mac}` : 'an identifier other than its MAC';
    consider(`the node with ${id} (host ${host.name}${fixedIn ? ', fixed address' : ''})`, whereText(host.at), compute(placement));
  }
  const onPath = pathStatements(ordinary, conf, truth);
  for (const condition of onPath.conditions) {
    const forced: Decide = (c) => c === condition || base(c);
    consider(`nodes for which \`${condition.text}\` holds`, whereText(condition.at), compute(ordinary, forced));
  }
  for (const sibling of subnet.share.subnets) {
    if (sibling === subnet || sibling.share !== subnet.share || !poolsOf(sibling)[0]) continue;
    consider(`nodes that lease in ${sibling.cidr} (the same shared-network ${subnet.share.name})`, whereText(sibling.at), compute({ subnet: sibling, pool: poolsOf(sibling)[0] as Pool, classes: baseClasses }));
  }
  const max = options.maxVariants ?? 20;
  return {
    found: true,
    subnet: subnet.cidr,
    declaredAt: whereText(subnet.at),
    dynamic,
    fixedAddress,
    variants: candidates.slice(0, max),
    moreVariants: Math.max(0, candidates.length - max),
    notes: [...notesFor(declarations, subnet, pools, ordinary), ...onPath.opaque.map((o) => `option 6 is set inside \`${o.what}\` (${whereText(o.at)}): dhcpd runs that for one case or on an event only, so it is not counted here`)],
  };
}

interface PathStatements {
  /** `if` conditions that depend on what the client sends and guard an option 6 statement. */
  conditions: Condition[];
  /** `switch` / `on` blocks that set option 6: run for one case or on an event, not counted. */
  opaque: Opaque[];
}

/** What the statements on a node's path (its subnet, pool, classes and hosts, and the groups around them) hold that this reading cannot settle by itself. */
function pathStatements(ordinary: Placement | undefined, conf: DhcpdConf, truth: (c: Condition) => string): PathStatements {
  const found: PathStatements = { conditions: [], opaque: [] };
  if (!ordinary) return found;
  const groups: Group[] = [ordinary.subnet.group, ordinary.pool?.group, ...conf.classes.map((k) => k.group), ...conf.hosts.map((h) => h.group)].filter((g): g is Group => g !== undefined);
  const seen = new Set<Group>();
  const walk = (statements: readonly Exec[]) => {
    for (const s of statements) {
      if (s.kind === 'opaque' && setsOption6(s.body)) found.opaque.push(s);
      if (s.kind !== 'if') continue;
      const matters = s.branches.some((b) => setsOption6(b.body));
      for (const b of s.branches) {
        if (matters && b.condition && truth(b.condition) === 'unknown') found.conditions.push(b.condition);
        walk(b.body);
      }
    }
  };
  for (const start of groups) {
    for (let g: Group | undefined = start; g && !seen.has(g); g = g.parent) {
      seen.add(g);
      walk(g.statements);
    }
  }
  return found;
}

function notesFor(declarations: Subnet[], subnet: Subnet, pools: Pool[], ordinary: Placement | undefined): string[] {
  const notes: string[] = [];
  if (declarations.length > 1) {
    notes.push(`${subnet.cidr} is declared ${declarations.length} times (${declarations.map((d) => whereText(d.at)).join(', ')}): dhcpd uses the last one, ${whereText(subnet.at)}, and its ranges only`);
  }
  if (!ordinary) notes.push(`no range for ${subnet.cidr} in the declaration dhcpd uses (${whereText(subnet.at)}): only nodes with a fixed address (a host declaration) get a lease`);
  if (pools.length > 1) notes.push(`${pools.length} pools serve ${subnet.cidr}: an ordinary node is counted in the first (${whereText((pools[0] as Pool).at)})`);
  return notes;
}
