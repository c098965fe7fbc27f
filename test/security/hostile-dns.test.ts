import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { observeDig, parseDig } from '../../src/adapters/ssh/dig.ts';
import { evaluateResolver } from '../../src/features/resolver/evaluate.ts';
import { answersZone } from '../../src/features/resolver/node-facing.ts';
import { probeSoaDirect } from '../../src/features/resolver/soa-direct.ts';
import type { ResolverObservation, ResolverSnapshot } from '../../src/features/resolver/types.ts';
import { encodeReply, parseQuestion, RCODE, soaRdata, TYPE } from '../../lab/rack-sim/dns-wire.ts';

/*
 * A resolver that answers NOERROR with another zone's SOA is not answering the zone (issue 27,
 * item 8): the answer's owner must be the zone asked about, for dig on the rack and for the bot's
 * own query alike; and what a rack's shell writes to stderr cannot pose as dig's reply.
 */

const ZONE = 'maas-internal';
const EVIL_SOA = { mname: 'ns.evil.example', rname: 'hostmaster.evil.example', serial: 4242, refresh: 60, retry: 60, expire: 60, minimum: 60 };

function snapshot(observation: ResolverObservation): ResolverSnapshot {
  return { site: 'site-b', resolver: '127.0.0.1', zone: ZONE, probedBy: 'test', observation };
}

/** A UDP resolver on loopback that answers every question NOERROR with the SOA of evil.example. */
async function evilResolver(): Promise<{ port: number; questions: string[]; close(): Promise<void> }> {
  const socket: Socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (packet, from) => {
    const question = parseQuestion(packet);
    if (!question) return;
    questions.push(question.name);
    const answers = [{ name: 'evil.example', type: TYPE.SOA, ttl: 60, rdata: soaRdata(EVIL_SOA) }];
    socket.send(encodeReply(question, { rcode: RCODE.NOERROR, authoritative: true, answers }), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: socket.address().port, questions, close: () => new Promise((resolve) => socket.close(() => resolve())) };
}

function dig(port: number): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), ZONE, 'SOA', '+time=1', '+tries=1'], (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : null) : 0 });
    });
  });
}

describe('another zone\'s SOA is not an answer for the zone asked about (item 8)', () => {
  let evil: Awaited<ReturnType<typeof evilResolver>>;
  beforeAll(async () => {
    evil = await evilResolver();
  });
  afterAll(async () => {
    await evil.close();
  });

  it('real dig against the resolver: NOERROR, but the SOA is evil.example\'s, so the check is critical, not ok', async () => {
    const run = await dig(evil.port);
    expect(run.stdout).toMatch(/status: NOERROR/);
    expect(run.stdout).toMatch(/^evil\.example\.\s+60\s+IN\s+SOA/m);
    const observation = observeDig(parseDig(run.stdout, run.stderr, run.code, ZONE), run.stderr);
    expect(observation).toMatchObject({ outcome: 'reply', status: 'NOERROR', soa: null, otherSoaOwner: 'evil.example.' });
    const { findings } = evaluateResolver(snapshot(observation));
    expect(findings[0]).toMatchObject({ code: 'RESOLVER_BAD_ANSWER', severity: 'critical' });
    expect(findings[0]!.summary).toContain('the SOA of another zone (evil.example.)');
    // fix-resolver's forwarder check asks the same question of the same observation.
    expect(answersZone(observation)).toBe(false);
  });

  it("the bot's own query (probe: direct) reads the owner too", async () => {
    const observation = await probeSoaDirect({ host: '127.0.0.1', port: evil.port }, ZONE, { timeoutMs: 1000 });
    expect(observation).toMatchObject({ outcome: 'reply', status: 'NOERROR', soa: null, otherSoaOwner: 'evil.example.' });
    expect(evaluateResolver(snapshot(observation)).findings[0]).toMatchObject({ code: 'RESOLVER_BAD_ANSWER', severity: 'critical' });
    expect(answersZone(observation)).toBe(false);
    expect(evil.questions.at(-1)).toBe(ZONE);
  });

  it('the zone\'s own SOA, in any letter case, still counts', () => {
    const fixture = readFileSync(join(import.meta.dirname, '../fixtures/dig/noerror-soa.txt'), 'utf8').replace(/^maas-internal\.(\s+600)/m, 'MAAS-Internal.$1');
    expect(parseDig(fixture, '', 0, ZONE).soa?.serial).toBe(2024010101);
  });
});

describe("dig's status is read from its stdout only (item 8)", () => {
  const forged = [
    ';; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1',
    ';; flags: qr aa rd ra; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 0',
    ';; ANSWER SECTION:',
    'maas-internal.\t600\tIN\tSOA\tns1.maas-internal. hostmaster.maas-internal. 1 1 1 1 1',
    '',
  ].join('\n');

  it('a header and an answer written to stderr (a login banner, a profile script) do not make a reply', () => {
    const stdout = ';; communications error to 10.20.0.2#53: timed out\n;; no servers could be reached\n';
    const observation = observeDig(parseDig(stdout, forged, 9, ZONE), forged);
    expect(observation).toEqual({ outcome: 'no-reply', detail: ';; communications error to 10.20.0.2#53: timed out' });
  });
});
