import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commandList } from '../../commands/index.ts';
import { jobRegistry } from '../../jobs/index.ts';
import { SCAN_CHECKS } from '../../src/edge/alerts/scan-checks.ts';
import { checkUsage, fixUsage } from '../../src/features/check-spec.ts';
import { CHECKS, COMMAND_NAMES, DEDUPLICATED_JOBS, FIX_COMMANDS, JOB_KINDS } from '../../src/features/registry.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const manifest = readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8');

/** The Slack column of the README's Commands table: `/maas dns-check <cluster>\|all` → `dns-check <cluster>|all`. */
function readmeSlackCommands(): string[] {
  const section = readme.slice(readme.indexOf('## Commands'), readme.indexOf('\n## ', readme.indexOf('## Commands') + 1));
  return [...section.matchAll(/^\| `\/maas ([^`]+)` \|/gm)].map((m) => (m[1] as string).replace(/\\\|/g, '|'));
}

describe('the check registry', () => {
  it('gives every check a /maas command with its usage and help line, and a job', () => {
    for (const check of CHECKS) {
      const command = commandList.find((c) => c.name === check.name);
      expect(command, check.name).toBeDefined();
      expect(command?.usage).toBe(checkUsage(check));
      expect(command?.summary).toBe(check.summary);
      expect(jobRegistry.has(check.name), check.name).toBe(true);
    }
  });

  it('gives every repair a check names a command and a job, once', () => {
    expect(FIX_COMMANDS.map((f) => f.fix.name)).toEqual(['fix-dns', 'fix-resolver', 'fix-macs']);
    for (const { fix, targetKind } of FIX_COMMANDS) {
      expect(commandList.filter((c) => c.name === fix.name).map((c) => c.usage)).toEqual([fixUsage(fix, targetKind)]);
      expect(jobRegistry.has(fix.name), fix.name).toBe(true);
    }
  });

  it('lists the commands in the registry order (scan, alerts, silence and audit too), and every job kind once', () => {
    expect(commandList.map((c) => c.name)).toEqual([...COMMAND_NAMES]);
    expect(COMMAND_NAMES).toEqual(expect.arrayContaining(['scan', 'alerts', 'silence', 'audit']));
    expect([...JOB_KINDS].sort()).toEqual([...jobRegistry.keys(), 'scan'].sort());
  });

  it('scans exactly the checks with a schedules key, each with the fix its alert offers', () => {
    const scheduled = CHECKS.filter((c) => c.schedule !== undefined);
    expect(Object.keys(SCAN_CHECKS)).toEqual(scheduled.map((c) => c.name));
    for (const check of scheduled) {
      expect(SCAN_CHECKS[check.name as keyof typeof SCAN_CHECKS]).toEqual({ targetKind: check.targetKind, schedule: check.schedule, fix: check.fix?.name });
      // An alert's "Plan fix" button runs this command.
      expect(check.fix, `${check.name} is scanned, so its alerts need a fix command`).toBeDefined();
    }
  });

  it('shares runs only of checks, never of a repair', () => {
    expect([...DEDUPLICATED_JOBS]).toEqual(CHECKS.filter((c) => c.dedup === 'same-target').map((c) => c.name));
    for (const { fix } of FIX_COMMANDS) expect(DEDUPLICATED_JOBS.has(fix.name)).toBe(false);
  });

  it("has a row in the README's Commands table for every check and repair, and no row for a command that does not exist", () => {
    const rows = readmeSlackCommands();
    for (const check of CHECKS) expect(rows, check.name).toContain(checkUsage(check));
    for (const { fix, targetKind } of FIX_COMMANDS) expect(rows, fix.name).toContain(fixUsage(fix, targetKind));
    for (const row of rows) expect(COMMAND_NAMES, row).toContain(row.split(' ')[0]);
  });

  it("names every /maas subcommand in the Slack manifest's usage hint", () => {
    const hint = /usage_hint: "([^"]+)"/.exec(manifest)?.[1] ?? '';
    const named = hint.split('|').map((part) => part.trim().split(' ')[0]);
    for (const name of COMMAND_NAMES) expect(named, name).toContain(name);
  });
});
