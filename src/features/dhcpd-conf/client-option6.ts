import type { ClientClass, Condition, Exec, Group, Host, Option6Set, Pool, ServerEntry, Subnet } from './conf-model.ts';

/** Where a client lands: the subnet of its address, the pool it leased from (none for a fixed address), its classes and host. */
export interface Placement {
  subnet: Subnet;
  pool?: Pool;
  /** Matching classes in declaration order. */
  classes: ClientClass[];
  host?: Host;
}

/** Whether an `if`/`elsif` branch is taken for this client. */
export type Decide = (condition: Condition) => boolean;

export interface AppliedSet {
  set: Option6Set;
  /** The scope the statement is in: `pool`, `subnet 10.20.0.0/24`, `host node-x`, `global`. */
  scope: string;
}

/** Option 6 after dhcpd has run a client's scopes: unset, a list of servers, or an expression it computes. */
export interface Option6Outcome {
  entries?: ServerEntry[];
  expression?: string;
  /** The statement that set it last and any that prepended or appended after it, in the order dhcpd ran them. */
  applied: AppliedSet[];
}

/**
 * Runs the option 6 statements of a client's scopes as dhcpd 4.4 does in ack_lease (server/dhcp.c):
 * the subnet's groups outermost first (global, enclosing groups, shared-network, subnet), then the
 * pool's, then each matching class from the last matched to the first, then the host's; each
 * stops short of the groups already run (common/execute.c execute_statements_in_scope). So the
 * innermost scope that sets the option wins, as dhcpd.conf(5) says ("the parameter declared in the
 * most specific scope is the one that is used").
 */
export function option6For(placement: Placement, decide: Decide): Option6Outcome {
  const state: Option6Outcome = { applied: [] };
  const { subnet, pool, classes, host } = placement;
  runGroup(state, subnet.group, undefined, decide);
  if (pool) runGroup(state, pool.group, pool.share.group, decide);
  const limit = pool ? pool.group : subnet.group;
  for (const klass of [...classes].reverse()) runGroup(state, klass.group, limit, decide);
  if (host) runGroup(state, host.group, limit, decide);
  return state;
}

/** The groups from `group` outwards that are not `limit` or outside it, outermost first. */
export function groupsToRun(group: Group, limit: Group | undefined): Group[] {
  const outer = new Set<Group>();
  for (let g = limit; g; g = g.parent) outer.add(g);
  const chain: Group[] = [];
  for (let g: Group | undefined = group; g && !outer.has(g); g = g.parent) chain.push(g);
  return chain.reverse();
}

function runGroup(state: Option6Outcome, group: Group, limit: Group | undefined, decide: Decide): void {
  for (const g of groupsToRun(group, limit)) run(state, g.statements, g.label, decide);
}

function run(state: Option6Outcome, statements: readonly Exec[], scope: string, decide: Decide): void {
  for (const s of statements) {
    if (s.kind === 'set') apply(state, s, scope);
    else if (s.kind === 'if') {
      const taken = s.branches.find((b) => !b.condition || decide(b.condition));
      if (taken) run(state, taken.body, taken.condition ? `${scope}, if ${taken.condition.text}` : `${scope}, else of if ${s.branches[0]?.condition?.text ?? ''}`, decide);
    }
  }
}

/** common/options.c set_option: `default` only when unset; `prepend` new then old; `append` old then new; the rest replace. */
function apply(state: Option6Outcome, set: Option6Set, scope: string): void {
  const isSet = state.entries !== undefined || state.expression !== undefined;
  if (set.op === 'default' && isSet) return;
  const combines = (set.op === 'prepend' || set.op === 'append') && isSet;
  state.applied = combines ? [...state.applied, { set, scope }] : [{ set, scope }];
  if (!combines) {
    state.entries = set.expression === undefined ? [...set.entries] : undefined;
    state.expression = set.expression;
    return;
  }
  if (set.expression !== undefined || state.expression !== undefined) {
    state.expression = [state.expression ?? entriesText(state.entries ?? []), set.expression ?? entriesText(set.entries)].join(set.op === 'append' ? ' then ' : ' after ');
    state.entries = undefined;
    return;
  }
  const old = state.entries ?? [];
  state.entries = set.op === 'append' ? [...old, ...set.entries] : [...set.entries, ...old];
}

function entriesText(entries: readonly ServerEntry[]): string {
  return entries.map((e) => ('address' in e ? e.address : e.name)).join(', ');
}

/** Whether running these statements could change option 6 at all (so a condition in them matters). */
export function setsOption6(statements: readonly Exec[]): boolean {
  return statements.some((s) => s.kind === 'set' || (s.kind === 'if' && s.branches.some((b) => setsOption6(b.body))));
}

export function groupSetsOption6(group: Group, limit: Group | undefined): boolean {
  return groupsToRun(group, limit).some((g) => setsOption6(g.statements));
}
