import { readFileSync } from 'node:fs';
import { pinnedMacsSnippet, tableText, type MacRow } from '../../src/features/macs/summary.ts';
import type { Finding, ReportStep, Report, ReportKind, Severity, StepResult } from '../../src/core/report.ts';
import { statusOf } from '../../src/core/report.ts';

/**
 * Generated worlds for the message budget: a small seeded generator (no dependency) of reports
 * as the checks build them, from 1 to 1,000 machines and 1 to 200 targets, with long and hostile
 * names, and every finding code documented in docs/findings.md.
 */

export interface ReportWorld {
  seed: number;
  targets: number;
  machines: number;
  reports: Report[];
}

/** mulberry32: a tiny deterministic PRNG. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every finding code with a section in docs/findings.md. */
export function documentedFindingCodes(): string[] {
  const text = readFileSync(new URL('../../docs/findings.md', import.meta.url), 'utf8');
  return [...text.matchAll(/^### ([A-Z][A-Z0-9_]+)\s*$/gm)].map((m) => m[1]!);
}

const HOSTILE = ['<!channel>', '<@U0ADMIN>', '<https://evil.example|click>', '&amp;', '*bold*', '`tick`', '```', '😀', '\u00e9', '>quote', '_x_', '~s~'];
const KINDS: ReportKind[] = ['dns-check', 'resolver-check', 'mac-diff', 'fix-dns', 'fix-macs', 'fix-resolver'];
const SEVERITIES: Severity[] = ['info', 'warning', 'critical', 'error'];

export function generateWorld(seed: number, shape: { targets?: number; machines?: number } = {}): ReportWorld {
  const rnd = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const targets = shape.targets ?? pick([1, 1, 2, 25, 60, 200, int(1, 200)]);
  const machines = shape.machines ?? pick([1, 12, 300, 1000, int(1, 1000)]);
  const codes = documentedFindingCodes();
  const name = (base: string) => {
    const long = rnd() < 0.2;
    const hostile = rnd() < 0.3 ? pick(HOSTILE) : '';
    return `${base}${hostile}${long ? '-' + 'x'.repeat(int(60, 240)) : ''}`;
  };
  const mac = () => Array.from({ length: 6 }, () => int(0, 255).toString(16).padStart(2, '0')).join(':');
  const ip = () => `10.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}`;

  const reports: Report[] = [];
  for (let t = 0; t < targets; t += 1) {
    const target = name(`site-${t}`);
    const kind = pick(KINDS);
    const mine = Math.max(1, Math.round(machines / targets) + (t === 0 ? machines % targets : 0));
    const hosts = Array.from({ length: mine }, (_, i) => name(`node-${t}-${i}`));
    const findings: Finding[] = [];
    const healthy = rnd() < 0.25;
    if (!healthy) {
      // Every documented code somewhere in the world, several codes per target, many per machine for MAC_DRIFT.
      const own = t === 0 ? codes : Array.from({ length: int(1, 6) }, () => pick(codes));
      for (const code of own) findings.push(finding(code, hosts, target));
      if (rnd() < 0.5) for (const h of hosts) findings.push(finding('MAC_DRIFT', [h], target));
    }
    const report: Report = {
      kind,
      target,
      status: statusOf(findings),
      verdict: `${findings.length} finding(s) at ${target}${rnd() < 0.3 ? ' ' + 'because '.repeat(int(10, 400)) : ''}`,
      findings,
      startedAt: new Date(Date.UTC(2026, 10, 30, 3, 0, 0) + t * 1000).toISOString(),
      durationMs: int(0, 120_000),
    };
    if (kind.startsWith('fix-')) {
      report.plan = { id: `plan-${seed}-${t}`, steps: hosts.map((h): ReportStep => ({ subject: h, action: 'set-mac', detail: `${mac()} → ${mac()}` })) };
      if (rnd() < 0.5) report.results = hosts.map((h): StepResult => ({ subject: h, action: 'set-mac', outcome: pick(['verified', 'skipped', 'refused', 'failed'] as const), detail: `read back ${mac()}` }));
    }
    reports.push(report);
  }
  return { seed, targets, machines, reports };

  function finding(code: string, hosts: string[], site: string): Finding {
    const severity = code.endsWith('_OK') || code === 'MAC_SUMMARY' || code === 'RESOLVER_NOT_CONFIGURED' ? 'info' : pick(SEVERITIES.slice(1));
    const subject = hosts.length === 1 ? hosts[0]! : site;
    const rows: MacRow[] = hosts.map((h) => ({ hostname: h, status: 'Deployed', vmHost: 'kvm-1', domain: h, state: 'drift', interface: 'eth0', recorded: mac(), live: mac(), detail: '' }));
    const interfaceMacs = Object.fromEntries(hosts.map((h) => [h, [mac(), mac()]]));
    const evidenceByCode: Record<string, Record<string, unknown>> = {
      MAC_SUMMARY: { table: rows, tableText: tableText(rows), okMachines: int(0, 1000), interfaceMacs, snippet: pinnedMacsSnippet(interfaceMacs) },
      MAC_DRIFT: { systemId: 'abc123', hostname: subject, interface: 'eth0', recorded: mac(), live: mac(), liveInterface: 'vnet3' },
      RESOLVER_OK: { site, resolver: ip(), zone: 'maas', serial: int(1, 1e9), soa: { mname: 'maas.', rname: 'nobody.', serial: int(1, 1e9), refresh: 30 } },
      DNS_CP_NOT_RUNNING: { fqdn: `${site}.maas`, machines: hosts.map((h) => ({ name: h, systemId: 'x', powered: false, ips: [ip()] })), recorded: [ip(), ip()], desired: [] },
    };
    return {
      code,
      severity,
      subject,
      summary: `${code} on ${subject}: ${'details '.repeat(int(1, 120))}`,
      evidence: evidenceByCode[code] ?? { fqdn: `${site}.maas`, recorded: hosts.map(() => ip()), desired: [ip()], note: name('n'), nested: { deep: { deeper: [1, 2, 3] } } },
      ...(rnd() < 0.8 ? { fix: `/maas fix-macs ${site} ${'then '.repeat(int(0, 200))}` } : {}),
    };
  }
}
