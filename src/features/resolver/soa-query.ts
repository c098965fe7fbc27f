import { randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { isIP } from 'node:net';
import { sameDnsName } from '../../adapters/ssh/dig.ts';
import type { SoaRecord } from './types.ts';

/*
 * One SOA question over UDP, read as RFC 1035 (4.1) lays a message out. node's resolveSoa
 * (c-ares) cannot be used here: it takes the first SOA of the answer whatever its owner and does
 * not say whose it is, so a resolver answering with another zone's SOA looked healthy.
 */

const TYPE_SOA = 6;
const CLASS_IN = 1;
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
/** Pointers followed while reading one name: a loop of them ends here. */
const MAX_POINTERS = 32;

export type SoaAnswer =
  | { outcome: 'reply'; status: string; soa: SoaRecord | null; otherSoaOwner: string | null }
  | { outcome: 'no-reply'; errno: 'ETIMEOUT' | 'ECONNREFUSED' }
  | { outcome: 'failed'; reason: string };

export interface SoaQueryOptions {
  timeoutMs: number;
  tries: number;
}

/** Asks address:port for `zone`'s SOA; the SOA counts only when its owner is `zone`. */
export async function querySoa(address: string, port: number, zone: string, options: SoaQueryOptions): Promise<SoaAnswer> {
  const id = randomInt(0, 0x10000);
  const query = encodeQuery(id, zone);
  const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.connect(port, address, () => (socket.off('error', reject), resolve()));
    });
    for (let attempt = 0; attempt < Math.max(1, options.tries); attempt++) {
      const reply = await exchange(socket, query, id, options.timeoutMs);
      if (reply === 'ECONNREFUSED') return { outcome: 'no-reply', errno: reply };
      if (reply !== 'ETIMEOUT') return readReply(reply, zone);
    }
    return { outcome: 'no-reply', errno: 'ETIMEOUT' };
  } catch (err) {
    return { outcome: 'failed', reason: (err as Error).message };
  } finally {
    socket.close();
  }
}

/** Sends the query once and waits for the reply carrying its id (other datagrams are ignored). */
function exchange(socket: ReturnType<typeof createSocket>, query: Buffer, id: number, timeoutMs: number): Promise<Buffer | 'ETIMEOUT' | 'ECONNREFUSED'> {
  return new Promise((resolve) => {
    const done = (value: Buffer | 'ETIMEOUT' | 'ECONNREFUSED') => {
      clearTimeout(timer);
      socket.off('message', onMessage);
      socket.off('error', onError);
      resolve(value);
    };
    const onMessage = (msg: Buffer) => {
      if (msg.length >= 12 && msg.readUInt16BE(0) === id && msg.readUInt16BE(2) & 0x8000) done(msg);
    };
    const onError = (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'ECONNREFUSED' : 'ETIMEOUT');
    const timer = setTimeout(() => done('ETIMEOUT'), timeoutMs);
    socket.on('message', onMessage);
    socket.on('error', onError);
    socket.send(query);
  });
}

function encodeQuery(id: number, zone: string): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // a standard query, recursion desired
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(TYPE_SOA, 0);
  tail.writeUInt16BE(CLASS_IN, 2);
  return Buffer.concat([header, encodeName(zone), tail]);
}

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

function readReply(msg: Buffer, zone: string): SoaAnswer {
  try {
    const rcode = msg.readUInt16BE(2) & 0x0f;
    const status = RCODE_NAMES[rcode] ?? `RCODE${rcode}`;
    let offset = 12;
    for (let q = msg.readUInt16BE(4); q > 0; q--) offset = readName(msg, offset).end + 4;
    let soa: SoaRecord | null = null;
    let otherSoaOwner: string | null = null;
    for (let a = msg.readUInt16BE(6); a > 0; a--) {
      const owner = readName(msg, offset);
      const type = msg.readUInt16BE(owner.end);
      const length = msg.readUInt16BE(owner.end + 8);
      const rdata = owner.end + 10;
      if (rdata + length > msg.length) throw new RangeError('an answer runs past the end of the reply');
      if (type === TYPE_SOA && sameDnsName(owner.name, zone)) soa ??= readSoa(msg, rdata);
      else if (type === TYPE_SOA) otherSoaOwner ??= `${owner.name}.`;
      offset = rdata + length;
    }
    return { outcome: 'reply', status, soa, otherSoaOwner: soa ? null : otherSoaOwner };
  } catch (err) {
    return { outcome: 'failed', reason: `the reply could not be read as DNS: ${(err as Error).message}` };
  }
}

function readSoa(msg: Buffer, offset: number): SoaRecord {
  const mname = readName(msg, offset);
  const rname = readName(msg, mname.end);
  const at = rname.end;
  if (at + 20 > msg.length) throw new RangeError('the SOA is cut short');
  const n = (i: number) => msg.readUInt32BE(at + i * 4);
  return { mname: mname.name, rname: rname.name, serial: n(0), refresh: n(1), retry: n(2), expire: n(3), minimum: n(4) };
}

/** A name at `offset`, following compression pointers; `end` is where the name's own bytes end. */
function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  let end = -1;
  for (let pointers = 0; ; ) {
    const length = msg.readUInt8(at);
    if ((length & 0xc0) === 0xc0) {
      if (++pointers > MAX_POINTERS) throw new RangeError('a name points in a loop');
      if (end < 0) end = at + 2;
      at = msg.readUInt16BE(at) & 0x3fff;
      continue;
    }
    if (length === 0) return { name: labels.join('.'), end: end < 0 ? at + 1 : end };
    if (length > 63 || at + 1 + length > msg.length) throw new RangeError('a label runs past the end of the reply');
    labels.push(msg.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
}
