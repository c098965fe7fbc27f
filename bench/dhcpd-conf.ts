/**
 * How long the dhcpd.conf reading takes and how much memory it holds, for MAAS-shaped files of
 * growing size (a host declaration per machine, as MAAS writes them) and for the hostile files of
 * issue 27 (12,000 nested groups, 200 KB of them, 4 MiB of empty statements, 4 MiB of stray `}`).
 * Writes (or replaces) the `## dhcpd.conf reading` section of bench/RESULTS.md.
 *
 *   node --expose-gc --import tsx bench/dhcpd-conf.ts
 */
import { readFileSync } from 'node:fs';
import { parseDhcpdConf, subnetOption6 } from '../src/features/dhcpd-conf/index.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const template = (JSON.parse(readFileSync(new URL('../test/fixtures/dhcpd-4.4.3/answers.jsonl', import.meta.url), 'utf8').split('\n')[0] as string) as { config: string }).config;

function maasFile(hosts: number): string {
  const host = (i: number) =>
    `# node-${i}\nhost node-${i} {\n   #\n   # Node DHCP snippets\n   #\n   # No DHCP snippets defined for host\n\n   hardware ethernet 52:54:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}:01;\n   fixed-address 10.20.${(i >> 8) & 255}.${i & 255};\n}\n`;
  return template.replace('#\n# Notify MAAS', `${Array.from({ length: hosts }, (_, i) => host(i)).join('')}#\n# Notify MAAS`);
}

const cases: [string, string][] = [
  ['MAAS template, 100 hosts', maasFile(100)],
  ['MAAS template, 1,000 hosts', maasFile(1_000)],
  ['MAAS template, 10,000 hosts', maasFile(10_000)],
  ['MAAS template, 30,000 hosts', maasFile(30_000)],
  ['12,000 nested `group {`', `${'group {'.repeat(12_000)}${'}'.repeat(12_000)}`],
  ['200 KB of nested `group{`', `${'group{'.repeat(33_333)}${'}'.repeat(33_333)}`],
  ['4 MiB of `a;`', 'a;'.repeat(2 * 1024 * 1024)],
  ['4 MiB of `}`', '}'.repeat(4 * 1024 * 1024)],
];

const rows: string[] = [];
for (const [name, text] of cases) {
  const times: number[] = [];
  let held = 0;
  let outcome = '';
  for (let run = 0; run < 5; run++) {
    gc();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    const parsed = parseDhcpdConf({ path: 'dhcpd.conf', text });
    const found = parsed.ok ? subnetOption6(parsed.conf, '10.20.0.0/24') : undefined;
    times.push(performance.now() - started);
    gc();
    held = Math.max(held, process.memoryUsage().heapUsed - before);
    outcome = !parsed.ok ? `not read: ${parsed.reason}` : parsed.conf.refusals.length ? `refused: ${parsed.conf.refusals.length} listed, ${parsed.conf.moreRefusals} counted` : found?.found ? `${found.dynamic?.servers.join(', ')}; ${found.variants.length + found.moreVariants} variants` : 'no subnet';
    if (!parsed.ok) continue;
    void parsed.conf.subnets.length;
  }
  times.sort((a, b) => a - b);
  rows.push(`| ${name} | ${(text.length / 1024).toFixed(0)} KiB | ${ms(times[2] as number)} | ${(held / 1024 / 1024).toFixed(1)} MiB | ${outcome} |`);
}

const body = `Reproduce: \`node --expose-gc --import tsx bench/dhcpd-conf.ts\` (${machineContext()}).

The reading (parse, then option 6 for 10.20.0.0/24 with every narrower scope), median of 5 runs; "held" is the V8 heap the
reading still holds after a full GC (the largest of the 5 runs), i.e. the parsed scopes.

| file | size | time | held | result |
| --- | ---: | ---: | ---: | --- |
${rows.join('\n')}`;
writeResultsSection('## dhcpd.conf reading', body);
console.log(body);
