import type { ClientClass, Exec, Group, Host, IfChain, Pool, SharedNetwork, Subnet, Where } from './conf-model.ts';

/** dhcpd's declaration types (server/confpars.c parse_statement's `type`), which decide what may be declared where. */
export type DeclType = 'root' | 'group' | 'shared-network' | 'subnet' | 'pool' | 'host' | 'class';

export interface Frame {
  declType: DeclType;
  /** Inside `if`, `on` or `switch`: only executable statements (common/parse.c parse_executable_statements). */
  executable: boolean;
  /** A block this reader does not model (`key`, `failover peer`, an unknown keyword): what is inside is read past. */
  opaque?: string;
  /** Where this block's parameters go; executable statements go to `exec`. */
  group: Group;
  exec: Exec[];
  share?: SharedNetwork;
  subnet?: Subnet;
  pool?: Pool;
  host?: Host;
  klass?: ClientClass;
  ifChain?: IfChain;
  switchBody?: boolean;
  header: string;
  at: Where;
}
