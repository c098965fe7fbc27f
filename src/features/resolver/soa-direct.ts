import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { querySoa } from './soa-query.ts';
import type { ResolverObservation } from './types.ts';

export interface DirectProbeOptions {
  /** Per-try timeout; default 2 s. */
  timeoutMs?: number;
  tries?: number;
}

/** Asks host:port for the zone's SOA from this process; only an SOA owned by the zone counts. */
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
  const answer = await querySoa(address, resolver.port, zone, { timeoutMs: options.timeoutMs ?? 2000, tries: options.tries ?? 1 });
  if (answer.outcome === 'no-reply') return { outcome: 'no-reply', detail: `querySoa ${answer.errno} ${zone}` };
  if (answer.outcome === 'failed') return { outcome: 'failed', reason: `the bot's own SOA query failed: ${answer.reason}` };
  const { status, soa, otherSoaOwner } = answer;
  const statusLine = soa ? `querySoa ${zone}: ${status}, SOA serial ${soa.serial}` : `querySoa ${zone}: ${status}${otherSoaOwner ? `, the SOA of ${otherSoaOwner}` : ''}`;
  return { outcome: 'reply', status, statusLine, soa, ...(otherSoaOwner ? { otherSoaOwner } : {}) };
}

async function addressOf(host: string): Promise<string> {
  if (isIP(host)) return host;
  return (await dns.lookup(host)).address;
}
