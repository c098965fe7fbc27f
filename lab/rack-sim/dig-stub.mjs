// A stand-in for `dig` on machines without bind9-dnsutils (the lab after only `npm ci`).
// It understands `dig @server [-p port] name [type] [+time=N] [+tries=N]`, asks over UDP and
// prints the parts of dig 9.18's full output that the resolver check reads, with dig's exit
// statuses (9: no server replied). Plain JavaScript: it runs as a program, without tsx.
import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';

const TYPES = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28 };
const TYPE_NAMES = Object.fromEntries(Object.entries(TYPES).map(([k, v]) => [v, k]));
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

function parseArgs(argv) {
  const args = { server: '127.0.0.1', port: 53, name: '.', type: 'A', time: 5, tries: 3 };
  const words = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('@')) args.server = arg.slice(1);
    else if (arg === '-p') args.port = Number(argv[++i]);
    else if (arg.startsWith('+time=')) args.time = Number(arg.slice(6));
    else if (arg.startsWith('+tries=')) args.tries = Number(arg.slice(7));
    else if (arg.startsWith('+')) continue;
    else words.push(arg);
  }
  if (words[0] !== undefined) args.name = words[0];
  if (words[1] !== undefined) args.type = words[1].toUpperCase();
  return args;
}

function encodeName(name) {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

function query(id, name, type) {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(TYPES[type] ?? 1, 0);
  tail.writeUInt16BE(1, 2);
  return Buffer.concat([header, encodeName(name), tail]);
}

function readName(packet, offset) {
  const labels = [];
  let jumped = false;
  let end = offset;
  for (let guard = 0; guard < 128; guard++) {
    const length = packet[offset];
    if ((length & 0xc0) === 0xc0) {
      if (!jumped) end = offset + 2;
      offset = ((length & 0x3f) << 8) | packet[offset + 1];
      jumped = true;
      continue;
    }
    if (length === 0) {
      if (!jumped) end = offset + 1;
      break;
    }
    labels.push(packet.toString('latin1', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  return { name: `${labels.join('.')}.`, end };
}

function readRecord(packet, offset) {
  const { name, end } = readName(packet, offset);
  const type = packet.readUInt16BE(end);
  const ttl = packet.readUInt32BE(end + 4);
  const length = packet.readUInt16BE(end + 8);
  const start = end + 10;
  let data;
  if (type === TYPES.A) data = [...packet.subarray(start, start + 4)].join('.');
  else if (type === TYPES.NS || type === TYPES.CNAME || type === TYPES.PTR) data = readName(packet, start).name;
  else if (type === TYPES.SOA) {
    const mname = readName(packet, start);
    const rname = readName(packet, mname.end);
    const numbers = [0, 1, 2, 3, 4].map((i) => packet.readUInt32BE(rname.end + i * 4));
    data = [mname.name, rname.name, ...numbers].join(' ');
  } else data = `\\# ${length} ${packet.subarray(start, start + length).toString('hex')}`;
  return { line: `${name}\t\t${ttl}\tIN\t${TYPE_NAMES[type] ?? `TYPE${type}`}\t${data}`, end: start + length };
}

function printReply(args, packet, elapsedMs) {
  const id = packet.readUInt16BE(0);
  const flagsWord = packet.readUInt16BE(2);
  const counts = [4, 6, 8, 10].map((o) => packet.readUInt16BE(o));
  const flags = [[0x8000, 'qr'], [0x0400, 'aa'], [0x0200, 'tc'], [0x0100, 'rd'], [0x0080, 'ra']].filter(([bit]) => flagsWord & bit).map(([, n]) => n);
  const status = RCODES[flagsWord & 0x0f] ?? `RCODE${flagsWord & 0x0f}`;
  const out = [';; Got answer:', `;; ->>HEADER<<- opcode: QUERY, status: ${status}, id: ${id}`,
    `;; flags: ${flags.join(' ')}; QUERY: ${counts[0]}, ANSWER: ${counts[1]}, AUTHORITY: ${counts[2]}, ADDITIONAL: ${counts[3]}`];
  if ((flagsWord & 0x0100) && !(flagsWord & 0x0080)) out.push(';; WARNING: recursion requested but not available');
  out.push('', ';; QUESTION SECTION:', `;${args.name.replace(/\.$/, '')}.\t\t\tIN\t${args.type}`);
  let offset = readName(packet, 12).end + 4;
  for (const [title, count] of [['ANSWER', counts[1]], ['AUTHORITY', counts[2]]]) {
    if (!count) continue;
    out.push('', `;; ${title} SECTION:`);
    for (let i = 0; i < count; i++) {
      const record = readRecord(packet, offset);
      out.push(record.line);
      offset = record.end;
    }
  }
  out.push('', `;; Query time: ${elapsedMs} msec`, `;; SERVER: ${args.server}#${args.port}(${args.server}) (UDP)`,
    `;; WHEN: ${new Date().toUTCString()}`, `;; MSG SIZE  rcvd: ${packet.length}`, '');
  process.stdout.write(`${out.join('\n')}\n`);
}

function ask(args, id) {
  return new Promise((resolve) => {
    const socket = createSocket(args.server.includes(':') ? 'udp6' : 'udp4');
    const started = Date.now();
    const done = (outcome) => {
      clearTimeout(timer);
      socket.close();
      resolve({ ...outcome, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => done({ error: 'timed out' }), args.time * 1000);
    socket.on('error', (err) => done({ error: err.code === 'ECONNREFUSED' ? 'connection refused' : err.message }));
    socket.on('message', (packet) => {
      if (packet.length >= 12 && packet.readUInt16BE(0) === id) done({ packet });
    });
    socket.connect(args.port, args.server, () => socket.send(query(id, args.name, args.type)));
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const shown = process.argv.slice(2).join(' ');
  const header = ['', `; <<>> DiG 9.18-maas-chatops-stub <<>> ${shown}`, '; (1 server found)', ';; global options: +cmd'];
  const errors = [];
  for (let attempt = 0; attempt < Math.max(1, args.tries); attempt++) {
    const outcome = await ask(args, randomInt(0, 65536));
    if (outcome.packet) {
      process.stdout.write(`${[...errors, ...header].join('\n')}\n`);
      printReply(args, outcome.packet, outcome.elapsedMs);
      return 0;
    }
    errors.push(`;; communications error to ${args.server}#${args.port}: ${outcome.error}`);
  }
  process.stdout.write(`${[...errors, ...header, ';; no servers could be reached'].join('\n')}\n`);
  return 9;
}

process.exitCode = await main();
