import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate, registryCommands, TO_WRITE, usageHint, withFindingSections, withReadmeRows, withUsageHint, type DocCommand } from '../../scripts/check-docs.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const manifest = readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8');
const findings = readFileSync(new URL('../../docs/findings.md', import.meta.url), 'utf8');

/** A check a contributor has just added to the registry: its folder emits two codes no doc names yet. */
const ntp: DocCommand = { name: 'ntp-check', usage: 'ntp-check <site>|all', kind: 'check', summary: 'the rack clock against the site NTP servers' };

describe('npm run docs:checks', () => {
  it('has nothing to write: the manifest, the README and docs/findings.md are what the registry makes them', async () => {
    for (const file of await generate()) expect(file.after, `${file.path} is behind the registry: run npm run docs:checks`).toBe(file.before);
  });

  it('adds a new check to the usage hint, after the other checks', () => {
    const hint = usageHint([...registryCommands(), ntp]);
    expect(hint).toMatch(/^help \| sites \| dns-check <cluster>\|all \|.* \| ntp-check <site>\|all \| .*timeline$/);
    expect(withUsageHint(manifest, hint)).toContain(`usage_hint: "${hint}"`);
  });

  it('adds a README row for a new check after the last check row, keeping every written row', () => {
    const commands = registryCommands();
    const checks = commands.filter((c) => c.kind === 'check');
    const after = withReadmeRows(readme, [...checks, ntp, ...commands.filter((c) => c.kind === 'fix')]);
    const lines = after.split('\n');
    const row = lines.indexOf('| `/maas ntp-check <site>\\|all` | `maas-chatops ntp-check <site>\\|all [--json]` | the rack clock against the site NTP servers |');
    expect(row).toBeGreaterThan(0);
    expect(lines[row - 1]).toMatch(/^\| `\/maas dhcp-check /);
    expect(after.replace(`${lines[row]}\n`, '')).toBe(readme);
  });

  it("gives a new check's codes their own section with the anchor, heading and the two lines still to write", () => {
    const after = withFindingSections(findings, [{ check: 'ntp-check', codes: ['NTP_SKEW', 'NTP_UNREACHABLE'] }]);
    const section = after.slice(after.indexOf('## ntp-check'), after.indexOf('## Any check'));
    expect(section).toMatch(/<a id="ntp_skew"><\/a>\n### NTP_SKEW\n/);
    expect(section).toMatch(/<a id="ntp_unreachable"><\/a>\n### NTP_UNREACHABLE\n/);
    expect(section.match(/\*\*Means\*\*/g)).toHaveLength(2);
    expect(section.split(TO_WRITE).length - 1).toBe(4);
    expect(withFindingSections(after, [{ check: 'ntp-check', codes: ['NTP_SKEW', 'NTP_UNREACHABLE'] }])).toBe(after);
  });

  it("puts a check's new code after its documented ones", () => {
    const after = withFindingSections(findings, [{ check: 'mac-diff', codes: ['MAC_DRIFT', 'MAC_BRAND_NEW'] }]);
    const at = after.indexOf('<a id="mac_brand_new"></a>');
    expect(at).toBeGreaterThan(after.indexOf('## MAC checks'));
    expect(at).toBeLessThan(after.indexOf('## Any check'));
  });
});
