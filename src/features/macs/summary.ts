import type { Finding } from '../../core/report.ts';

/** One line of the mac-diff table: a machine (or one of its interfaces) and what was found. */
export interface MacRow {
  hostname: string;
  /** MAAS status name. */
  status: string;
  vmHost: string;
  domain: string;
  /** ok, drift, ambiguous, no such domain, unreachable, error, no power address. */
  state: string;
  interface: string;
  recorded: string;
  live: string;
  detail: string;
}

const TEXT_ROWS = 40;

/**
 * MAC_SUMMARY (info): the compact table of every machine that is not OK, and the class fix:
 * the live MACs of every domain read, in domiflist order, as the `interface_macs` map of the
 * OpenTofu/Terraform libvirt module, so that no in-place apply can regenerate them again.
 */
export function macSummary(input: { site: string; rows: MacRow[]; liveByDomain: Map<string, string[]>; anyDrift: boolean }): Finding {
  const problems = input.rows.filter((r) => r.state !== 'ok');
  const okMachines = new Set(input.rows.filter((r) => r.state === 'ok').map((r) => r.hostname)).size;
  const interfaceMacs = Object.fromEntries([...input.liveByDomain].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const snippet = pinnedMacsSnippet(interfaceMacs);
  return {
    code: 'MAC_SUMMARY',
    severity: 'info',
    subject: input.site,
    summary: `${problems.length} row${problems.length === 1 ? '' : 's'} to look at, ${okMachines} machine${okMachines === 1 ? '' : 's'} OK; pin the live MACs in the infrastructure code`,
    evidence: { table: problems, tableText: tableText(problems), okMachines, interfaceMacs, snippet },
    fix: input.anyDrift
      ? `/maas fix-macs ${input.site} to update MAAS's records, then pin the MACs (snippet) so no apply can drift them again`
      : 'Pin the MACs (snippet) so no in-place apply can regenerate them',
  };
}

export function tableText(rows: readonly MacRow[]): string {
  if (!rows.length) return '';
  const cells = rows.slice(0, TEXT_ROWS).map((r) => [
    r.hostname,
    r.status,
    r.domain ? `${r.vmHost}/${r.domain}` : r.vmHost,
    r.state === 'drift' || r.state === 'ambiguous' ? `${r.interface} ${r.recorded || '(none)'} → ${r.live || '(none)'}` : r.state,
  ]);
  const header = ['HOSTNAME', 'STATE', 'VM HOST/DOMAIN', 'RECORDED → LIVE'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0))).join('  ');
  const lines = [line(header), ...cells.map(line)];
  if (rows.length > TEXT_ROWS) lines.push(`… and ${rows.length - TEXT_ROWS} more (see the JSON report)`);
  return lines.join('\n');
}

/** An HCL map literal; names are HCL-escaped (quotes, backslashes, `${` and `%{` templates). */
export function pinnedMacsSnippet(interfaceMacs: Record<string, string[]>): string {
  const entries = Object.entries(interfaceMacs);
  if (!entries.length) return '';
  const body = entries.map(([domain, macs]) => `  ${hclString(domain)} = [${macs.map(hclString).join(', ')}]`);
  return ['# libvirt domains: pin every NIC MAC so an in-place apply cannot regenerate it', 'interface_macs = {', ...body, '}'].join('\n');
}

function hclString(value: string): string {
  return JSON.stringify(value).replace(/\$\{/g, () => '$${').replace(/%\{/g, () => '%%{');
}
