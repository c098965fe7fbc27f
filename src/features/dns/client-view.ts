import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { ClientViewConfig, Config } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import { digACommand, parseDig } from '../../adapters/ssh/dig.ts';
import type { SafeCommand } from '../../adapters/ssh/shell-quote.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshConnector, SshSession } from '../../adapters/ssh/types.ts';
import { resolverLabel } from '../resolver/types.ts';

/** What a client asking the configured resolver for the API name got. */
export type ClientView =
  | {
      outcome: 'reply';
      resolver: string;
      askedBy: string;
      /** NOERROR, NXDOMAIN, SERVFAIL, ... */
      status: string;
      /** The A records, each with the TTL the resolver gave (what a cache has left). */
      addresses: { ip: string; ttl: number }[];
      command?: string;
    }
  | { outcome: 'no-reply' | 'failed'; resolver: string; askedBy: string; detail: string; command?: string };

export interface ClientViewOptions {
  /** SSH command timeout when dig runs on the rack (default 15 s; dig gives up after ~2 s). */
  commandTimeoutMs?: number;
  /** Per-query timeout when the bot asks itself (default 2 s, one try). */
  directTimeoutMs?: number;
}

/** Asks the configured resolver for `fqdn`'s A records, from the bot or with dig on a site's rack. */
export async function askClientView(fqdn: string, view: ClientViewConfig, config: Config, ssh: SshConnector, options: ClientViewOptions = {}): Promise<ClientView> {
  const resolver = resolverLabel(view.resolverHost, view.resolverPort);
  if (view.via === 'direct') return { resolver, askedBy: "the bot's own resolver (clientView.via: direct)", ...(await askDirect(fqdn, view, options.directTimeoutMs ?? 2000)) };
  const site = config.sites[view.site ?? ''];
  let askedBy = `dig on the ${view.site ?? '?'} rack over SSH`;
  let command: SafeCommand | undefined;
  let session: SshSession | undefined;
  try {
    if (!site) throw new Error(`no site ${view.site ?? '(none)'} for clientView.site`);
    const target = rackTarget(site);
    askedBy = `dig on the ${site.name} rack (${target.user}@${target.host}) over SSH`;
    command = digACommand({ host: view.resolverHost, port: view.resolverPort }, fqdn);
    session = await ssh.connect(target);
    const timeoutMs = options.commandTimeoutMs ?? 15_000;
    const result = await session.exec(command, { timeoutMs });
    if (result.timedOut) return { outcome: 'failed', resolver, askedBy, command, detail: `dig did not finish within ${Math.round(timeoutMs / 1000)}s on ${session.host}` };
    const dig = parseDig(result.stdout, result.stderr, result.code);
    if (dig.status) {
      const addresses = dig.answers.filter((a) => a.type === 'A').map((a) => ({ ip: a.data, ttl: a.ttl }));
      return { outcome: 'reply', resolver, askedBy, command, status: dig.status, addresses };
    }
    if (dig.noReply) return { outcome: 'no-reply', resolver, askedBy, command, detail: dig.errorLine ?? 'dig: no server replied' };
    return { outcome: 'failed', resolver, askedBy, command, detail: `dig exited ${result.code ?? 'without a status'}${dig.errorLine ? `: ${dig.errorLine}` : ''}` };
  } catch (err) {
    return { outcome: 'failed', resolver, askedBy, ...(command ? { command } : {}), detail: describeError(err) };
  } finally {
    session?.close();
  }
}

const STATUS_BY_CODE: Record<string, string> = { ENODATA: 'NOERROR', ENOTFOUND: 'NXDOMAIN', ESERVFAIL: 'SERVFAIL', EREFUSED: 'REFUSED' };

type Asked = { outcome: 'reply'; status: string; addresses: { ip: string; ttl: number }[] } | { outcome: 'no-reply' | 'failed'; detail: string };

async function askDirect(fqdn: string, view: ClientViewConfig, timeoutMs: number): Promise<Asked> {
  const client = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  const host = view.resolverHost;
  if (!isIP(host)) return { outcome: 'failed', detail: `clientView.resolver must be an address for via: direct, not ${host}` };
  client.setServers([isIP(host) === 6 ? `[${host}]:${view.resolverPort}` : `${host}:${view.resolverPort}`]);
  try {
    const records = await client.resolve4(fqdn, { ttl: true });
    return { outcome: 'reply', status: 'NOERROR', addresses: records.map((r) => ({ ip: r.address, ttl: r.ttl })) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const status = STATUS_BY_CODE[code];
    if (status) return { outcome: 'reply', status, addresses: [] };
    if (code === 'ETIMEOUT' || code === 'ECONNREFUSED') return { outcome: 'no-reply', detail: `no answer from the resolver within ${Math.round(timeoutMs / 1000)}s (${code})` };
    return { outcome: 'failed', detail: describeError(err) };
  }
}
