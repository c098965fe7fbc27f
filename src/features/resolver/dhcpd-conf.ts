import { isIPv4 } from 'node:net';

/** Where `option domain-name-servers` (DHCP option 6) was found for a subnet. */
export type Option6Scope = 'subnet' | 'shared-network' | 'global' | 'none';

/** What an ISC dhcpd config hands the clients of one subnet in DHCP option 6, in order. */
export interface SubnetDnsServers {
  /** The subnet as a CIDR (`10.20.0.0/24`). */
  subnet: string;
  /** The addresses, in the order nodes are given them; empty when no scope sets option 6. */
  servers: string[];
  /** The statement as written (`option domain-name-servers 10.20.0.2, 10.0.0.5;`), when one applies. */
  line?: string;
  scope: Option6Scope;
  /** Narrower scopes that set option 6 too (a pool, a host, a conditional): some clients get those instead. */
  otherScopes: string[];
}

export type SubnetDnsLookup = ({ found: true } & SubnetDnsServers) | { found: false; problem: string; subnets: string[] };

interface Statement {
  /** The words of the statement or block header, strings kept with their quotes. */
  words: string[];
  text: string;
  /** The headers of the enclosing blocks, outermost first. */
  scopes: string[][];
}

/** Turns a dhcpd.conf into its statements (`...;`) with their enclosing block headers; comments dropped. */
function statements(text: string): Statement[] {
  const out: Statement[] = [];
  const scopes: string[][] = [];
  let words: string[] = [];
  let word = '';
  let raw = '';
  const endWord = () => {
    if (word) words.push(word);
    word = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      endWord();
      continue;
    }
    if (c === '"') {
      const end = text.indexOf('"', i + 1);
      const stop = end < 0 ? text.length - 1 : end;
      word += text.slice(i, stop + 1);
      raw += text.slice(i, stop + 1);
      i = stop;
      continue;
    }
    if (c === ';' || c === '{' || c === '}') {
      endWord();
      if (c === ';' && words.length) out.push({ words, text: `${raw.trim().replace(/\s+/g, ' ')};`, scopes: [...scopes] });
      if (c === '{') scopes.push(words);
      if (c === '}') scopes.pop();
      words = [];
      raw = '';
      continue;
    }
    raw += c;
    if (/\s/.test(c)) endWord();
    else word += c;
  }
  return out;
}

function isSubnetHeader(header: string[] | undefined): header is string[] {
  return header?.[0] === 'subnet' && header[2] === 'netmask';
}

function describeScope(header: string[]): string {
  return header.join(' ');
}

function prefixOf(mask: string): number | undefined {
  if (!isIPv4(mask)) return undefined;
  const bits = mask
    .split('.')
    .map((o) => Number(o).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits) ? bits.replace(/0+$/, '').length : undefined;
}

/** `subnet 10.20.0.0 netmask 255.255.255.0` as `10.20.0.0/24`. */
function cidrOf(header: string[]): string {
  const prefix = prefixOf(header[3] ?? '');
  return `${header[1] ?? '?'}/${prefix ?? header[3] ?? '?'}`;
}

function sameCidr(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

function serversOf(statement: Statement): string[] {
  return statement.words
    .slice(2)
    .join(' ')
    .split(/[\s,]+/)
    .filter(Boolean);
}

const isOption6 = (s: Statement) => s.words[0] === 'option' && s.words[1] === 'domain-name-servers';

/**
 * DHCP option 6 as dhcpd hands it to the clients of `cidr` (IPv4): the last `option
 * domain-name-servers` directly in that subnet's block, else in its shared-network, else global.
 * Pools, hosts and conditionals that set it too are listed, not merged.
 */
export function subnetDnsServers(configText: string, cidr: string): SubnetDnsLookup {
  const all = statements(configText);
  const subnetHeaders = new Map<string, string[]>();
  for (const s of all) {
    const header = s.scopes.find(isSubnetHeader);
    if (header) subnetHeaders.set(cidrOf(header), header);
  }
  const header = [...subnetHeaders.entries()].find(([c]) => sameCidr(c, cidr))?.[1];
  if (!header) {
    const subnets = [...subnetHeaders.keys()];
    return { found: false, problem: `no subnet block for ${cidr} (it has ${subnets.length ? subnets.join(', ') : 'none'})`, subnets };
  }
  const options = all.filter(isOption6);
  const inSubnet = options.filter((s) => s.scopes.at(-1) === header);
  const sharedNetwork = (() => {
    const withHeader = all.find((s) => s.scopes.includes(header));
    const index = withHeader ? withHeader.scopes.indexOf(header) : -1;
    return index > 0 ? withHeader?.scopes[index - 1] : undefined;
  })();
  const inShared = sharedNetwork ? options.filter((s) => s.scopes.at(-1) === sharedNetwork) : [];
  const global = options.filter((s) => s.scopes.length === 0);
  const narrower = options.filter((s) => (s.scopes.includes(header) && s.scopes.at(-1) !== header) || s.scopes[0]?.[0] === 'host');
  const [scope, chosen]: [Option6Scope, Statement | undefined] = inSubnet.length
    ? ['subnet', inSubnet.at(-1)]
    : inShared.length
      ? ['shared-network', inShared.at(-1)]
      : global.length
        ? ['global', global.at(-1)]
        : ['none', undefined];
  return {
    found: true,
    subnet: cidrOf(header),
    servers: chosen ? serversOf(chosen) : [],
    ...(chosen ? { line: chosen.text } : {}),
    scope,
    otherScopes: narrower.map((s) => `${describeScope(s.scopes.at(-1) ?? [])}: ${serversOf(s).join(', ')}`),
  };
}

/** Drops every line that carries a key's secret (the OMAPI key MAAS writes into dhcpd.conf) before anything else sees the text. */
export function withoutSecrets(configText: string): string {
  return configText
    .split('\n')
    .filter((line) => !/^\s*secret\b/i.test(line))
    .join('\n');
}
