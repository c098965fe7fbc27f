import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { findJob } from '../../jobs/index.ts';
import { SSH_OUTPUT_CAP_BYTES } from '../../src/adapters/ssh/types.ts';
import type { Report } from '../../src/core/report.ts';
import { DEFAULT_PARSE_LIMITS, parseDhcpdConf, type DhcpdConf, type IncludeFile } from '../../src/features/dhcpd-conf/index.ts';
import { NODE_SUBNET, resolverSitesPerTest } from '../integration/fix-resolver-site.ts';

/*
 * A dhcpd.conf built to exhaust the reader (issue 27, item 2): millions of refusals from 4 MiB of
 * `}`, thousands of lexer errors, unmodelled blocks full of option 6, 50,000 host names in option 6,
 * and includes that try to lift the nesting and size bounds. Every one is read with memory that
 * stays small, and the answer still says the file could not be read whole.
 */

const KEPT = DEFAULT_PARSE_LIMITS.maxProblemsKept;
const FOUR_MIB = 4 * 1024 * 1024;

function parsed(text: string, includes: Record<string, IncludeFile> = {}): DhcpdConf {
  const result = parseDhcpdConf({ path: 'dhcpd.conf', text }, new Map(Object.entries(includes)));
  if (!result.ok) throw new Error(result.reason);
  return result.conf;
}

/** A full GC before reading the heap, so what is counted is what the reading holds, not garbage it left. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('refusals and unread parts are listed up to a bound, then counted', () => {
  it('4 MiB of `}`: the first 20 refusals listed, the other 4,194,284 counted, and the heap stays small', () => {
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    const conf = parsed('}'.repeat(FOUR_MIB));
    collectGarbage();
    const held = process.memoryUsage().heapUsed - before;
    expect(conf.refusals).toHaveLength(KEPT);
    expect(conf.refusals[0]).toEqual({ at: { file: 'dhcpd.conf', line: 1 }, reason: expect.stringMatching(/^a '}' with no block open/) });
    expect(conf.moreRefusals).toBe(FOUR_MIB - KEPT);
    expect(held).toBeLessThan(64 * 1024 * 1024);
  });

  it("the lexer's errors share the bound: 200 runs of 1,500 blanks are 20 listed and 180 counted", () => {
    const conf = parsed(`${' '.repeat(1500)};`.repeat(200));
    expect(conf.refusals.map((p) => p.reason)).toEqual(Array.from({ length: KEPT }, () => expect.stringMatching(/whitespace too long/)));
    expect(conf.moreRefusals).toBe(200 - KEPT);
  });

  it('an unmodelled block setting option 6 a thousand times: 20 unread parts listed, 980 counted', () => {
    const conf = parsed(`key k { ${'option domain-name-servers 10.1.1.1; '.repeat(1000)}}`);
    expect(conf.unread).toHaveLength(KEPT);
    expect(conf.moreUnread).toBe(1000 - KEPT);
    expect(conf.refusals).toEqual([]);
  });

  it('50,000 host names in option 6 are each kept once, in order', () => {
    const statement = (k: number) => `option domain-name-servers ${Array.from({ length: 5000 }, (_, i) => `ns-${k}-${i}`).join(', ')};`;
    const text = Array.from({ length: 10 }, (_, k) => statement(k)).join('\n');
    const conf = parsed(`${text}\n${statement(0)}`);
    expect(conf.names).toHaveLength(50_000);
    expect([conf.names[0], conf.names.at(-1)]).toEqual(['ns-0-0', 'ns-9-4999']);
  });
});

describe('an include cannot lift the bounds', () => {
  it('nesting counts across the file and its includes', () => {
    const half = DEFAULT_PARSE_LIMITS.maxDepth / 2;
    const result = parseDhcpdConf({ path: 'dhcpd.conf', text: `${'group {'.repeat(half)} include "/x.conf"; ${'}'.repeat(half)}` }, new Map([['/x.conf', { text: `${'group {'.repeat(half)}${'}'.repeat(half)}` }]]));
    expect(result).toEqual({ ok: false, reason: `blocks nested more than ${DEFAULT_PARSE_LIMITS.maxDepth} deep (at /x.conf:1)` });
  });

  it('size counts the file and its includes together', () => {
    const half = '#'.repeat(DEFAULT_PARSE_LIMITS.maxChars / 2 + 1);
    const result = parseDhcpdConf({ path: 'dhcpd.conf', text: `include "/x.conf";\n${half}` }, new Map([['/x.conf', { text: half }]]));
    expect(result).toEqual({ ok: false, reason: `the file and its includes are over the ${DEFAULT_PARSE_LIMITS.maxChars} characters this reading holds (at /x.conf)` });
  });
});

describe("dhcp-check on a rack whose dhcpd.conf ends in (almost) 4 MiB of '}'", () => {
  const site = resolverSitesPerTest();

  it('is refused, with 20 problems listed and the rest counted in the finding and its summary', async () => {
    const s = await site();
    const braces = SSH_OUTPUT_CAP_BYTES - 64 * 1024;
    writeFileSync(s.dhcpdPath, `subnet 10.20.0.0 netmask 255.255.255.0 { range 10.20.0.100 10.20.0.199; }\n${'}'.repeat(braces)}`);
    const job = findJob('dhcp-check');
    const [report] = (await job?.run(s.ctx, { target: 'site-b' })) as Report[];
    expect(report?.verdict).toBe(`site-b: dhcpd would refuse ${s.dhcpdPath}, so nodes on ${NODE_SUBNET.cidr} get no answer from this rack once dhcpd restarts`);
    const finding = report?.findings.find((f) => f.code === 'RESOLVER_DHCP_REFUSED');
    expect(finding?.evidence).toMatchObject({ problems: Array.from({ length: KEPT }, () => expect.stringMatching(/^.*dhcpd\.conf:2: a '}' with no block open/)), moreProblems: braces - KEPT });
    expect(finding?.summary).toContain(`; and ${braces - 1} more)`);
  });
});
