import { checkJob } from '../../jobs/check-job.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Report } from '../../src/core/report.ts';
import { createRedactor, redactDeep } from '../../src/core/redact.ts';
import { renderReports } from '../../src/edge/slack/render.ts';
import { hostileNames } from '../helpers/hostile-names.ts';

const macDiffJob = checkJob(macDiffCheck);

/*
 * Hostile names in MAAS data (hostnames, zones, power_id domain names, power addresses) go through
 * the real mac-diff path: MAAS simulator over HTTP, ssh2 to a VM host whose real /bin/sh runs what
 * arrives. Proof that nothing but our one command ran is taken on the server side: the SSH server's
 * record of every exec'd command line, and a canary file that only an injected command would create.
 */

const HOST = '127.0.0.1';

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
let dir: string;
let canary: string;
let lab: MacLab;
let report: Report;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inject-'));
  canary = join(dir, 'CANARY');
  const names = hostileNames(canary);
  const machines = names.map((name, i) =>
    machine({
      system_id: `h${i}`,
      hostname: i % 2 ? name.slice(0, 200) : `<!channel> ${name.slice(0, 50)}`,
      zone: i % 3 ? 'site-x' : `zone; touch ${canary}`,
      macs: [`52:54:00:00:10:${i.toString(16).padStart(2, '0')}`],
      power: virshPower(HOST, name, 'ops'),
    }),
  );
  // A power_address whose host part carries shell syntax: never a host to connect to.
  machines.push(machine({ system_id: 'badaddr', hostname: 'badaddr', zone: 'site-x', macs: ['52:54:00:00:20:01'], power: { power_type: 'virsh', power_parameters: { power_address: `qemu+ssh://ops@127.0.0.1;touch ${canary}/system`, power_id: 'dom-x' } } }));
  // Half of the hostile domains exist on the host (with a drifted MAC), half do not.
  const domains = names.filter((_, i) => i % 2 === 0).map((name, i) => ({ name, nics: [{ mac: `52:54:00:ff:10:${i.toString(16).padStart(2, '0')}` }] }));
  lab = await startMacLab({ machines, sites: [{ name: 'site-x', zone: 'site-x', vmHosts: [{ address: HOST, state: { domains } }] }] });
  // No zone filter: the machines whose zone name is hostile are read too.
  lab.config.sites['site-x']!.machines = {};
  const reports = await macDiffJob.run({ config: lab.config, adapters: lab.adapters, log: silentLogger() }, { target: 'site-x' });
  report = reports[0]!;
});

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('hostile names in MAAS data reach the VM host only as quoted data', () => {
  it('exactly one SSH session and one command ran on the host, and the canary was never created', () => {
    const ssh = lab.vmHosts.get(HOST)!.ssh;
    expect(ssh.authenticated).toBe(1);
    expect(ssh.commands).toHaveLength(1);
    expect(existsSync(canary)).toBe(false);
    console.log(`injection corpus: ${hostileNames(canary).length} hostile domain names, ${ssh.commands.length} command run on the VM host, canary created: ${existsSync(canary)}`);
  });

  it('every hostile domain name reached virsh as one literal argument', () => {
    const names = hostileNames(canary);
    const found = report.findings.filter((f) => f.code === 'MAC_DRIFT').map((f) => f.evidence.domain);
    const missing = report.findings.filter((f) => f.code === 'MAC_DOMAIN_MISSING').map((f) => f.evidence.domain);
    // The ones the host has were found by their exact name; the others were asked for and reported missing.
    expect(new Set(found)).toEqual(new Set(names.filter((_, i) => i % 2 === 0)));
    expect(new Set(missing)).toEqual(new Set(names.filter((_, i) => i % 2 === 1)));
  });

  it('a power_address with shell syntax in its host is reported, never connected to', () => {
    const bad = report.findings.find((f) => f.evidence.systemId === 'badaddr');
    expect(bad).toBeDefined();
    expect(JSON.stringify(bad)).toMatch(/invalid host|not a libvirt URI/);
    expect(lab.vmHosts.get(HOST)!.ssh.sessions).toBe(1);
  });

  it('hostile hostnames are shown as typed in Slack: no broadcast, no bidi override, no carriage return', () => {
    // As the notifier does it: the one redaction pass, then the renderer.
    const redacted = redactDeep([report], createRedactor([]));
    const { text, blocks } = renderReports(redacted);
    const strings = [text, ...stringsIn(blocks)];
    expect(strings.some((t) => t.includes('<!channel>'))).toBe(false);
    expect(strings.some((t) => t.includes('&lt;!channel&gt;'))).toBe(true);
    expect(strings.some((t) => /[\r\u202e\u200b]/.test(t))).toBe(false);
    expect(stringsIn(redacted).some((t) => t.includes('dom\\u{202e}; touch'))).toBe(true);
  });
});
