import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digSoaCommand, observeDig, parseDig } from '../../../src/adapters/ssh/dig.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/dig');

/** A fixture is dig's output followed by a `# exit status: N` line that dig did not print. */
function loadFixture(name: string): { stdout: string; exitCode: number } {
  const text = readFileSync(join(FIXTURES, name), 'utf8');
  const match = /\n# exit status: (\d+)\n?$/.exec(text);
  if (!match) throw new Error(`${name}: no exit status trailer`);
  return { stdout: text.slice(0, match.index + 1), exitCode: Number(match[1]) };
}

const expected: Record<string, { status: string | null; noReply: boolean; serial?: number; outcome: string; errorLine?: RegExp }> = {
  'noerror-soa.txt': { status: 'NOERROR', noReply: false, serial: 2024010101, outcome: 'reply' },
  'servfail-soa.txt': { status: 'SERVFAIL', noReply: false, outcome: 'reply' },
  'nxdomain-a.txt': { status: 'NXDOMAIN', noReply: false, outcome: 'reply' },
  'refused-port-no-servers.txt': { status: null, noReply: true, outcome: 'no-reply', errorLine: /communications error to 127\.0\.0\.1#5499: connection refused/ },
  'timed-out-no-servers.txt': { status: null, noReply: true, outcome: 'no-reply', errorLine: /communications error to 127\.0\.0\.1#5410: timed out/ },
};

describe('parseDig on real dig 9.18 output', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.txt'));

  it('has an expectation for every fixture', () => {
    expect(files.sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(files)('%s', (file) => {
    const { stdout, exitCode } = loadFixture(file);
    const want = expected[file];
    if (!want) throw new Error(`no expectation for ${file}`);
    const result = parseDig(stdout, '', exitCode, 'maas-internal');
    expect(result.status).toBe(want.status);
    expect(result.noReply).toBe(want.noReply);
    expect(result.soa?.serial).toBe(want.serial);
    if (want.status) {
      expect(result.statusLine).toBe(stdout.split('\n').find((l) => l.includes('status:')));
      expect(result.statusLine).toMatch(/^;; ->>HEADER<<- opcode: QUERY, status: /);
    } else {
      expect(result.statusLine).toBeNull();
      expect(result.errorLine).toMatch(want.errorLine as RegExp);
    }
    expect(observeDig(result).outcome).toBe(want.outcome);
  });

  it('reads the SOA answer and the header flags', () => {
    const { stdout, exitCode } = loadFixture('noerror-soa.txt');
    const result = parseDig(stdout, '', exitCode, 'maas-internal');
    expect(result.flags).toEqual(['qr', 'aa', 'rd', 'ra']);
    expect(result.answers).toEqual([
      { name: 'maas-internal.', ttl: 600, class: 'IN', type: 'SOA', data: 'ns1.maas-internal. hostmaster.maas-internal. 2024010101 1200 180 1209600 600' },
    ]);
    expect(result.soa).toEqual({ mname: 'ns1.maas-internal.', rname: 'hostmaster.maas-internal.', serial: 2024010101, refresh: 1200, retry: 180, expire: 1209600, minimum: 600 });
  });

  it('finds no SOA in a SERVFAIL or an NXDOMAIN', () => {
    for (const file of ['servfail-soa.txt', 'nxdomain-a.txt']) {
      const { stdout, exitCode } = loadFixture(file);
      expect(parseDig(stdout, '', exitCode)).toMatchObject({ answers: [], soa: null });
    }
  });
});

describe('observeDig', () => {
  it('calls exit 127 a missing dig, with the package to install', () => {
    const observation = observeDig(parseDig('', 'sh: 1: dig: not found\n', 127), 'sh: 1: dig: not found\n');
    expect(observation).toEqual({ outcome: 'failed', reason: 'dig is not installed on the rack (exit status 127)', fix: expect.stringContaining('bind9-dnsutils') });
  });

  it("reports another failure with dig's own words", () => {
    const stderr = "dig: couldn't get address for 'nosuch.invalid': not found\n";
    expect(observeDig(parseDig('', stderr, 10), stderr)).toEqual({ outcome: 'failed', reason: `dig exited 10: dig: couldn't get address for 'nosuch.invalid': not found` });
  });

  it('keeps the status line exactly as dig printed it', () => {
    const { stdout, exitCode } = loadFixture('servfail-soa.txt');
    expect(observeDig(parseDig(stdout, '', exitCode))).toMatchObject({ outcome: 'reply', status: 'SERVFAIL', statusLine: ';; ->>HEADER<<- opcode: QUERY, status: SERVFAIL, id: 43964', soa: null });
  });
});

describe('digSoaCommand', () => {
  it('builds the runbook command with a short time and one try, full output', () => {
    expect(digSoaCommand({ host: '10.20.0.2', port: 53 }, 'maas-internal')).toBe('dig @10.20.0.2 -p 53 maas-internal SOA +time=2 +tries=1');
  });

  it('quotes a hostile zone or resolver into one word', () => {
    expect(digSoaCommand({ host: '10.0.0.1;reboot', port: 53 }, '$(reboot)')).toBe("dig @'10.0.0.1;reboot' -p 53 '$(reboot)' SOA +time=2 +tries=1");
  });

  it.each(['-f/etc/passwd', '+short', '-x'])('refuses %j, which dig would read as an option', (zone) => {
    expect(() => digSoaCommand({ host: '10.20.0.2', port: 53 }, zone)).toThrow(/not a zone dig can be asked about/);
  });
});
