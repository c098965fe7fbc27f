import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export const RESULTS_PATH = fileURLToPath(new URL('../RESULTS.md', import.meta.url));

/** Replaces (or appends) one `## heading` section of bench/RESULTS.md; the other sections stay as they are. */
export function writeResultsSection(heading: string, body: string, path = RESULTS_PATH): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  const section = `${heading}\n\n${body.trim()}\n`;
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) {
    writeFileSync(path, `${text.trimEnd()}\n\n${section}`);
    return;
  }
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^## /.test(lines[i]!)) {
      end = i;
      break;
    }
  }
  const before = lines.slice(0, start).join('\n').trimEnd();
  const after = lines.slice(end).join('\n');
  writeFileSync(path, `${before ? `${before}\n\n` : ''}${section}${after ? `\n${after}` : ''}`);
}

export function machineContext(): string {
  const load = os.loadavg().map((l) => l.toFixed(1)).join(' / ');
  return `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), load average ${load} (1/5/15 min) when it finished`;
}

export function ms(v: number): string {
  return Number.isFinite(v) ? `${Math.round(v)} ms` : '-';
}
