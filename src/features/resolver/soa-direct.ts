import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { ResolverObservation } from './types.ts';

export interface DirectProbeOptions {
  /** Per-try timeout; without one a dead server costs c-ares' default of ~27 s. */
  timeoutMs?: number;
  tries?: number;
}

/** c-ares error codes of an answered query, by the header status they stand for. */
const STATUS_BY_CODE: Record<string, string> = {
  ENODATA: 'NOERROR',
  ESERVFAIL: 'SERVFAIL',
  EREFUSED: 'REFUSED',
  ENOTFOUND: 'NXDOMAIN',
  ENOTIMP: 'NOTIMP',
  EFORMERR: 'FORMERR',
};

/** Codes that mean no reply came back. */
const NO_REPLY_CODES = new Set(['ETIMEOUT', 'ECONNREFUSED']);

/** Asks host:port for the zone's SOA from this process, with node's resolver (c-ares). */
export async function probeSoaDirect(
  resolver: { host: string; port: number },
  zone: string,
  options: DirectProbeOptions = {},
): Promise<ResolverObservation> {
  let address: string;
  try {
    address = await addressOf(resolver.host);
  } catch (err) {
    return { outcome: 'failed', reason: `cannot resolve the resolver's name ${resolver.host}: ${(err as Error).message}` };
  }
  const client = new dns.Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 1 });
  client.setServers([isIP(address) === 6 ? `[${address}]:${resolver.port}` : `${address}:${resolver.port}`]);
  try {
    const soa = await client.resolveSoa(zone);
    return {
      outcome: 'reply',
      status: 'NOERROR',
      statusLine: `querySoa ${zone}: NOERROR, SOA serial ${soa.serial}`,
      soa: { mname: soa.nsname, rname: soa.hostmaster, serial: soa.serial, refresh: soa.refresh, retry: soa.retry, expire: soa.expire, minimum: soa.minttl },
    };
  } catch (err) {
    return observeError(err as NodeJS.ErrnoException);
  }
}

function observeError(err: NodeJS.ErrnoException): ResolverObservation {
  const code = err.code ?? 'UNKNOWN';
  const status = STATUS_BY_CODE[code];
  if (status) return { outcome: 'reply', status, statusLine: err.message, soa: null };
  if (NO_REPLY_CODES.has(code)) return { outcome: 'no-reply', detail: err.message };
  return { outcome: 'failed', reason: `node's resolver failed: ${err.message}` };
}

async function addressOf(host: string): Promise<string> {
  if (isIP(host)) return host;
  return (await dns.lookup(host)).address;
}
