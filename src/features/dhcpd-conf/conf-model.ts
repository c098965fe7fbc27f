import type { Token } from './lexer.ts';

/**
 * dhcpd.conf as ISC dhcpd 4.4 holds it after reading (server/confpars.c): every declaration has a
 * group of parameters whose parent is the group it was declared in, and a client's options are the
 * statements of those groups run outermost first (server/dhcp.c ack_lease). Only what decides DHCP
 * option 6 is kept; every other statement is read past.
 */

/** A file and line: `/var/lib/maas/dhcpd.conf:95`. */
export interface Where {
  file: string;
  line: number;
}

export function whereText(at: Where): string {
  return `${at.file}:${at.line}`;
}

/** How a statement changes option 6 (common/options.c set_option): `option` and `send` supersede. */
export type SetOp = 'supersede' | 'default' | 'prepend' | 'append';

export type ServerEntry = { address: string } | { name: string };

export interface Option6Set {
  kind: 'set';
  op: SetOp;
  entries: ServerEntry[];
  /** `option domain-name-servers = <expression>;`: dhcpd computes it per client; not evaluated here. */
  expression?: string;
  /** The statement, one line, as dhcpd read it (comments gone). */
  text: string;
  at: Where;
}

export interface Condition {
  tokens: Token[];
  text: string;
  at: Where;
}

export interface IfChain {
  kind: 'if';
  /** `if`, then each `elsif`, then `else` (no condition). */
  branches: { condition?: Condition; body: Exec[] }[];
  at: Where;
}

/** `on commit { … }`, `switch (…) { … }`: run on an event or for one case; option 6 inside is not counted. */
export interface Opaque {
  kind: 'opaque';
  what: string;
  body: Exec[];
  at: Where;
}

export type Exec = Option6Set | IfChain | Opaque;

export interface Group {
  parent: Group | undefined;
  statements: Exec[];
  /** What declared it: `subnet 10.20.0.0/24`, `pool`, `host node-b01`, `class "kvm"`, `group`, `global`. */
  label: string;
  at: Where;
}

export interface SharedNetwork {
  name: string;
  /** A subnet declared outside any shared-network gets one of its own, sharing the subnet's group. */
  implicit: boolean;
  group: Group;
  subnets: Subnet[];
  pools: Pool[];
  at: Where;
}

export interface Subnet {
  cidr: string;
  network: number;
  mask: number;
  group: Group;
  share: SharedNetwork;
  at: Where;
}

export interface AddressRange {
  low: number;
  high: number;
  text: string;
  subnet: Subnet;
  at: Where;
}

export interface Pool {
  share: SharedNetwork;
  group: Group;
  ranges: AddressRange[];
  /** Made by dhcpd for `range` statements written directly in a subnet. */
  anonymous: boolean;
  at: Where;
}

export interface Host {
  name: string;
  group: Group;
  /** `hardware ethernet`, lower case, two hex digits a byte. */
  mac?: string;
  fixed: ServerEntry[];
  /** Matched by `host-identifier` or a client id rather than the MAC: who it is cannot be told from the file. */
  identifiedOtherwise: boolean;
  at: Where;
}

export interface ClientClass {
  name: string;
  group: Group;
  /** `match if <expression>`; absent for classes whose members come from `subclass` or spawning. */
  match?: Condition;
  at: Where;
}

export interface Problem {
  at: Where;
  reason: string;
}

export interface DhcpdConf {
  root: Group;
  /** Every subnet declaration, in file order. */
  subnets: Subnet[];
  hosts: Host[];
  /** In declaration order (dhcpd checks them in this order, server/class.c check_collection). */
  classes: ClientClass[];
  /** What `dhcpd -t` refuses: a dhcpd restarted with this file exits. */
  refusals: Problem[];
  /** Refusals past the first `maxProblemsKept`, counted but not listed. */
  moreRefusals: number;
  /** Parts that could not be read (an include) or are not modelled, where option 6 may be set. */
  unread: Problem[];
  /** Unread parts past the first `maxProblemsKept`, counted but not listed. */
  moreUnread: number;
  /** `include` files the reading needs and was not given. */
  wanted: { path: string; at: Where }[];
  /** Host names in option 6 values: dhcpd resolves them (the first address of each). */
  names: string[];
}
