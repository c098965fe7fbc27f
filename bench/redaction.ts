/**
 * How long redaction takes on the hostile texts of issue 27 (item 1), at growing sizes, beside
 * plain prose of the same size (the baseline). Linear work grows as the input does; the old
 * quadratic patterns took about 10 s for 40 KB. The security test checks what is redacted,
 * bounded by its timeout; the figures are here.
 * Writes (or replaces) the `## redaction` section of bench/RESULTS.md.
 *
 *   node --import tsx bench/redaction.ts
 */
import { createRedactor } from '../src/core/redact.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';

const redact = createRedactor(['canary-secret-value-1234', 'canary:other:valuevalue'], { names: ['prod-badtoken'] });
const SIZES = [64 * 1024, 256 * 1024, 1024 * 1024];

const shapes: [string, string][] = [
  ['plain prose (baseline)', 'The rack controller answered the DHCP probe from 10.20.0.5 on br-pxe. '],
  ['dotted words (a.a.a…)', 'a.'],
  ['dashed words (a-a-a…)', 'a-'],
  ['JWT heads (eyJ-eyJ-…)', 'eyJ-'],
  ['URL schemes (a.b://…)', 'a.b://'],
  ['credential words (token token …)', 'token '],
  ['open quotes after keys (token="…)', 'token="'],
  ['ellipses (……)', '…'],
  ['a known secret cut before ellipses', 'canary-s…'],
];

function median(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2] as number;
}

const rows: string[] = [];
for (const [name, unit] of shapes) {
  const times = SIZES.map((size) => {
    const text = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    return median(() => redact(text));
  });
  const growth = (times[2] as number) / Math.max(times[0] as number, 0.001);
  rows.push(`| ${name} | ${times.map(ms).join(' | ')} | ×${growth.toFixed(1)} |`);
}

const body = `Reproduce: \`node --import tsx bench/redaction.ts\` (${machineContext()}).

One redactor (two secrets, one name), median of 5 runs per cell. Input ×16 from the first column to the last: linear work is about ×16 in time, the old quadratic patterns were ×256.

| text | 64 KiB | 256 KiB | 1 MiB | 1 MiB / 64 KiB |
| --- | ---: | ---: | ---: | ---: |
${rows.join('\n')}`;
writeResultsSection('## redaction', body);
console.log(body);
