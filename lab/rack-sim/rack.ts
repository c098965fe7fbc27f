import { createSocket, type RemoteInfo } from 'node:dgram';
import { encodeName, encodeReply, parseQuestion, RCODE, soaRdata, TYPE, type Question, type Soa } from './dns-wire.ts';

/**
 * How the simulated rack's node-facing resolver behaves:
 * healthy answers its zone authoritatively; servfail is the maas-agent resolver on an isolated
 * rack (SERVFAIL to everything, its own zone included); silent swallows every query;
 * refused answers REFUSED (a resolver that does not serve the zone).
 */
export type RackMode = 'healthy' | 'servfail' | 'silent' | 'refused';

export interface RackOptions {
  mode: RackMode;
  zone?: string;
  serial?: number;
  /** Loopback address to listen on (default 127.0.0.1). */
  host?: string;
  port?: number;
  /** A records the resolver holds (the API name, say), each counting its TTL down like a cache. */
  records?: CachedRecord[];
}

export interface CachedRecord {
  name: string;
  ips: string[];
  /** Seconds the answer stays cached from when it is set; then the name answers nothing (NOERROR, no records). */
  ttl: number;
}

export interface SimulatedRack {
  host: string;
  port: number;
  zone: string;
  readonly mode: RackMode;
  /** Queries received, answered or not. */
  readonly queries: number;
  setMode(mode: RackMode): void;
  /** Puts (or replaces) a cached A answer; ttl 0 leaves the name answering nothing. */
  setRecord(record: CachedRecord): void;
  close(): Promise<void>;
}

const TTL = 600;

/** A rack's resolver as a tiny UDP DNS server in this process: no dnsmasq needed. */
export async function startRack(options: RackOptions): Promise<SimulatedRack> {
  const zone = (options.zone ?? 'maas-internal').toLowerCase().replace(/\.$/, '');
  const soa: Soa = { mname: `ns1.${zone}`, rname: `hostmaster.${zone}`, serial: options.serial ?? 2024010101, refresh: 1200, retry: 180, expire: 1209600, minimum: 600 };
  let mode = options.mode;
  let queries = 0;
  const records = new Map<string, { ips: string[]; expiresAt: number }>();
  const setRecord = (r: CachedRecord) => records.set(r.name.toLowerCase().replace(/\.$/, ''), { ips: r.ips, expiresAt: Date.now() + r.ttl * 1000 });
  for (const r of options.records ?? []) setRecord(r);
  const socket = createSocket('udp4');
  socket.on('message', (packet: Buffer, from: RemoteInfo) => {
    queries++;
    const question = parseQuestion(packet);
    if (!question || mode === 'silent') return;
    const cached = mode === 'healthy' ? records.get(question.name) : undefined;
    socket.send(cached ? cachedAnswer(question, cached) : answer(question, mode, zone, soa), from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = socket.address();
  return {
    host: address.address,
    port: address.port,
    zone,
    get mode() {
      return mode;
    },
    get queries() {
      return queries;
    },
    setMode(next) {
      mode = next;
    },
    setRecord,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A resolver's cached A answer: the TTL left, counting down; nothing once it has run out. */
function cachedAnswer(question: Question, cached: { ips: string[]; expiresAt: number }): Buffer {
  const left = Math.ceil((cached.expiresAt - Date.now()) / 1000);
  if (left <= 0 || question.type !== TYPE.A) return encodeReply(question, { rcode: RCODE.NOERROR, authoritative: false });
  const answers = cached.ips.map((ip) => ({ name: question.name, type: TYPE.A, ttl: left, rdata: Buffer.from(ip.split('.').map(Number)) }));
  return encodeReply(question, { rcode: RCODE.NOERROR, authoritative: false, answers });
}

function answer(question: Question, mode: RackMode, zone: string, soa: Soa): Buffer {
  if (mode === 'servfail') return encodeReply(question, { rcode: RCODE.SERVFAIL, authoritative: false });
  if (mode === 'refused') return encodeReply(question, { rcode: RCODE.REFUSED, authoritative: false });
  const soaRecord = { name: zone, type: TYPE.SOA, ttl: TTL, rdata: soaRdata(soa) };
  const inZone = question.name === zone || question.name.endsWith(`.${zone}`);
  if (!inZone) return encodeReply(question, { rcode: RCODE.REFUSED, authoritative: false });
  if (question.name !== zone) return encodeReply(question, { rcode: RCODE.NXDOMAIN, authoritative: true, authority: [soaRecord] });
  if (question.type === TYPE.SOA) return encodeReply(question, { rcode: RCODE.NOERROR, authoritative: true, answers: [soaRecord] });
  if (question.type === TYPE.NS) {
    return encodeReply(question, { rcode: RCODE.NOERROR, authoritative: true, answers: [{ name: zone, type: TYPE.NS, ttl: TTL, rdata: encodeName(soa.mname) }] });
  }
  return encodeReply(question, { rcode: RCODE.NOERROR, authoritative: true, authority: [soaRecord] });
}
