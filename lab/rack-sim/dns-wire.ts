/** Just enough of RFC 1035's wire format to answer one question: no compression on input names. */
import type { SoaRecord } from '../../src/features/resolver/types.ts';

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
export const TYPE = { A: 1, NS: 2, SOA: 6 } as const;
const CLASS_IN = 1;

export interface Question {
  id: number;
  /** Opcode and RD bits of the query, echoed in the reply. */
  flags: number;
  name: string;
  type: number;
  class: number;
  /** The question section's bytes, copied into the reply. */
  raw: Buffer;
}

export type Soa = SoaRecord;

export interface ResourceRecord {
  name: string;
  type: number;
  ttl: number;
  rdata: Buffer;
}

/** The first question of a query, or null when the packet is not one we can read. */
export function parseQuestion(packet: Buffer): Question | null {
  if (packet.length < 12 || packet.readUInt16BE(4) < 1) return null;
  if (packet.readUInt16BE(2) & 0x8000) return null;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = packet[offset];
    if (length === undefined || length > 63) return null;
    offset++;
    if (length === 0) break;
    if (offset + length > packet.length) return null;
    labels.push(packet.toString('latin1', offset, offset + length));
    offset += length;
  }
  if (offset + 4 > packet.length) return null;
  return {
    id: packet.readUInt16BE(0),
    flags: packet.readUInt16BE(2),
    name: labels.join('.').toLowerCase(),
    type: packet.readUInt16BE(offset),
    class: packet.readUInt16BE(offset + 2),
    raw: packet.subarray(12, offset + 4),
  };
}

export function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

export function soaRdata(soa: Soa): Buffer {
  const numbers = Buffer.alloc(20);
  [soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum].forEach((n, i) => numbers.writeUInt32BE(n, i * 4));
  return Buffer.concat([encodeName(soa.mname), encodeName(soa.rname), numbers]);
}

/** A reply to `question` with the given RCODE, authoritative or not, and its sections. */
export function encodeReply(
  question: Question,
  options: { rcode: number; authoritative: boolean; answers?: ResourceRecord[]; authority?: ResourceRecord[] },
): Buffer {
  const answers = options.answers ?? [];
  const authority = options.authority ?? [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(question.id, 0);
  const opcodeAndRd = question.flags & 0x7900;
  header.writeUInt16BE(0x8000 | opcodeAndRd | (options.authoritative ? 0x0400 : 0) | options.rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  header.writeUInt16BE(authority.length, 8);
  header.writeUInt16BE(0, 10);
  return Buffer.concat([header, question.raw, ...answers.map(encodeRecord), ...authority.map(encodeRecord)]);
}

function encodeRecord(record: ResourceRecord): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(record.type, 0);
  fixed.writeUInt16BE(CLASS_IN, 2);
  fixed.writeUInt32BE(record.ttl, 4);
  fixed.writeUInt16BE(record.rdata.length, 8);
  return Buffer.concat([encodeName(record.name), fixed, record.rdata]);
}
