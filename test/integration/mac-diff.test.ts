import { checkJob } from '../../jobs/check-job.ts';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { macLabScenario, startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import type { Finding, Report } from '../../src/core/report.ts';

const macDiffJob = checkJob(macDiffCheck);

const HOST_A = '127.0.0.1';
const HOST_B = '127.0.0.2';

let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

function ctxOf(l: MacLab): JobContext {
  return { config: l.config, adapters: l.adapters, log: silentLogger() };
}

const byCode = (report: Report, code: string): Finding[] => report.findings.filter((f) => f.code === code);

/** Two VM hosts; a hostile domain name on A; a stale machine holding a live MAC; a bare-metal box. */
async function twoHostLab(pwnedPath: string): Promise<MacLab> {
  const hostile = `x'; touch ${pwnedPath}; '`;
  const vm = (id: string, host: string, domain: string, macs: string[], status = 'Ready') =>
    machine({ system_id: id, hostname: `${id}-vm`, zone: 'site-b', status, macs, power: virshPower(host, domain) });
  return startMacLab({
    machines: [
      vm('a1', HOST_A, 'dom-a1', ['52:54:00:0a:00:01']),
      vm('a2', HOST_A, 'dom-a2', ['52:54:00:0a:00:02'], 'Failed commissioning'),
      vm('a3', HOST_A, hostile, ['52:54:00:0a:00:03']),
      vm('a4', HOST_A, 'dom-gone', ['52:54:00:0a:00:04']),
      vm('b1', HOST_B, 'dom-b1', ['52:54:00:0b:00:01'], 'Deployed'),
      vm('b2', HOST_B, 'dom-b2', ['52:54:00:0b:00:02']),
      vm('stale', HOST_B, 'dom-stale', ['52:54:00:ee:00:02']),
      machine({ system_id: 'metal', hostname: 'metal1', zone: 'site-b', macs: ['0c:c4:7a:00:00:01'], power: { power_type: 'ipmi', power_parameters: { power_address: '10.9.9.9', power_pass: 's3cret-ipmi' } } }),
      machine({ system_id: 'other', hostname: 'elsewhere', zone: 'site-z', macs: ['52:54:00:0c:00:01'], power: virshPower(HOST_B, 'dom-other') }),
    ],
    sites: [
      {
        name: 'site-b',
        zone: 'site-b',
        vmHosts: [
          {
            address: HOST_A,
            state: {
              domains: [
                { name: 'dom-a1', nics: [{ mac: '52:54:00:0A:00:01' }] },
                { name: 'dom-a2', nics: [{ mac: '52:54:00:ee:00:01' }] },
                { name: hostile, nics: [{ mac: '52:54:00:0a:00:03' }] },
              ],
            },
          },
          {
            address: HOST_B,
            state: {
              domains: [
                { name: 'dom-b1', nics: [{ mac: '52:54:00:0b:00:01' }], running: true },
                { name: 'dom-b2', nics: [{ mac: '52:54:00:ee:00:02' }] },
                { name: 'dom-stale', nics: [{ mac: '52:54:00:ee:00:99' }, { mac: '52:54:00:ee:00:98' }] },
              ],
            },
          },
        ],
      },
    ],
  });
}

describe('mac-diff job against the MAAS simulator and two SSH VM hosts', () => {
  it('whoami, then 2 MAAS requests for the verdict and 2 for the drift witnesses (3 when no unknown neighbour: discovery/ is counted), one SSH connection and one command per host, every finding, nothing run from a domain name', async () => {
    const pwned = `/tmp/pwned-${randomBytes(6).toString('hex')}`;
    lab = await twoHostLab(pwned);
    const [report] = await macDiffJob.run(ctxOf(lab), { target: 'site-b' });
    if (!report) throw new Error('no report');

    // No discovery in this world: by_unknown_mac is empty, so discovery/ is read once to tell "off" from "all known".
    expect(lab.maas.calls.map((c) => `${c.method} ${c.path}${c.op ? ` op=${c.op}` : ''}`).sort()).toEqual([
      'GET /MAAS/api/2.0/discovery/',
      'GET /MAAS/api/2.0/discovery/ op=by_unknown_mac',
      'GET /MAAS/api/2.0/events/ op=query',
      'GET /MAAS/api/2.0/machines/',
      'GET /MAAS/api/2.0/machines/ op=power_parameters',
      'GET /MAAS/api/2.0/users/ op=whoami',
    ]);
    // The events request names exactly the drifted machines, bounded by limit.
    expect(lab.maas.calls.find((c) => c.op === 'query')?.query).toMatchObject({ id: ['a2', 'b2'], limit: ['100'] });
    expect(lab.maas.calls.find((c) => !c.op && c.path.endsWith('/machines/'))?.query).toEqual({ zone: ['site-b'] });
    for (const address of [HOST_A, HOST_B]) {
      const host = lab.vmHosts.get(address)?.ssh;
      expect(host?.authenticated, address).toBe(1);
      expect(host?.commands, address).toHaveLength(1);
      expect(host?.users).toEqual(['ops']);
    }
    expect(existsSync(pwned)).toBe(false);

    expect(report).toMatchObject({ kind: 'mac-diff', target: 'site-b', status: 'critical' });
    expect(report.verdict).toBe('3 of 8 machines at site-b have drifted MACs: MAAS will see them as unknown at PXE; 1 power_id names no libvirt domain; 1 not virsh-powered');
    expect(byCode(report, 'MAC_DRIFT').map((f) => f.evidence)).toEqual([
      expect.objectContaining({ systemId: 'a2', status: 'Failed commissioning', vmHost: HOST_A, domain: 'dom-a2', interface: 'eth0', recorded: '52:54:00:0a:00:02', live: '52:54:00:ee:00:01' }),
      expect.objectContaining({ systemId: 'b2', vmHost: HOST_B, domain: 'dom-b2', recorded: '52:54:00:0b:00:02', live: '52:54:00:ee:00:02' }),
    ]);
    expect(byCode(report, 'MAC_IN_USE').map((f) => f.evidence)).toEqual([expect.objectContaining({ systemId: 'b2', live: '52:54:00:ee:00:02', otherSystemId: 'stale' })]);
    expect(byCode(report, 'MAC_DOMAIN_MISSING').map((f) => f.evidence)).toEqual([expect.objectContaining({ systemId: 'a4', vmHost: HOST_A, domain: 'dom-gone' })]);
    expect(byCode(report, 'MAC_AMBIGUOUS').map((f) => f.evidence.systemId)).toEqual(['stale']);
    expect(byCode(report, 'MAC_NOT_VIRSH').map((f) => f.evidence)).toEqual([{ systemId: 'metal', hostname: 'metal1', powerType: 'ipmi' }]);
    expect(report.findings.some((f) => f.subject === 'a3-vm' && f.code !== 'MAC_SUMMARY')).toBe(false);
    expect(JSON.stringify(report)).not.toContain('s3cret-ipmi');
  });

  it('one VM host down: MAC_HOST_UNREACHABLE for it, the other host’s machines still reported', async () => {
    lab = await twoHostLab(`/tmp/pwned-${randomBytes(6).toString('hex')}`);
    await lab.vmHosts.get(HOST_B)?.ssh.close();
    const [report] = await macDiffJob.run(ctxOf(lab), { target: 'site-b' });
    if (!report) throw new Error('no report');
    expect(report.status).toBe('error');
    const [down] = byCode(report, 'MAC_HOST_UNREACHABLE');
    expect(down).toMatchObject({ subject: HOST_B, evidence: { vmHost: HOST_B, systemIds: ['b1', 'b2', 'stale'] } });
    expect(String(down?.evidence.reason)).toMatch(/connection refused/);
    expect(byCode(report, 'MAC_DRIFT').map((f) => f.evidence.systemId)).toEqual(['a2']);
    expect(report.verdict).toMatch(/^1 of 8 machines at site-b has drifted MACs.*3 unchecked \(VM host 127\.0\.0\.2 unreachable\)/);
    expect(lab.vmHosts.get(HOST_A)?.ssh.commands).toHaveLength(1);
  });

  it('a host key that is not the pinned one is refused before anything runs there', async () => {
    lab = await twoHostLab(`/tmp/pwned-${randomBytes(6).toString('hex')}`);
    const site = lab.config.sites['site-b'];
    const entry = site?.vmHosts[HOST_A];
    if (!entry) throw new Error('no vmHosts entry');
    entry.hostKey = `SHA256:${'A'.repeat(43)}`;
    const [report] = await macDiffJob.run(ctxOf(lab), { target: 'site-b' });
    expect(report && byCode(report, 'MAC_HOST_UNREACHABLE')[0]?.evidence.reason).toMatch(/SSH refused/);
    expect(lab.vmHosts.get(HOST_A)?.ssh.commands).toHaveLength(0);
    expect(lab.vmHosts.get(HOST_B)?.ssh.commands).toHaveLength(1);
  });
});

describe('a hostile power_address port', () => {
  it('MAAS naming another port on a VM host does not make the worker connect there: the configured port is used', async () => {
    const hostile = createServer((socket) => socket.destroy());
    let hostileConnections = 0;
    hostile.on('connection', () => void (hostileConnections += 1));
    await new Promise<void>((resolve) => hostile.listen(0, HOST_A, () => resolve()));
    const hostilePort = (hostile.address() as AddressInfo).port;
    try {
      lab = await startMacLab({
        machines: [
          machine({ system_id: 'h1', hostname: 'h1-vm', zone: 'site-b', macs: ['52:54:00:0a:00:01'], power: { power_type: 'virsh', power_parameters: { power_address: `qemu+ssh://ops@${HOST_A}:${hostilePort}/system`, power_id: 'dom-h1' } } }),
        ],
        sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST_A, state: { domains: [{ name: 'dom-h1', nics: [{ mac: '52:54:00:0a:00:01' }] }] } }] }],
      });
      const [report] = await macDiffJob.run(ctxOf(lab), { target: 'site-b' });
      expect(hostileConnections).toBe(0);
      expect(lab.vmHosts.get(HOST_A)?.ssh.commands).toHaveLength(1);
      expect(report?.status).toBe('ok');

      // With no port configured for the host, the SSH default (22) applies, never MAAS's port.
      delete lab.config.sites['site-b']!.vmHosts[HOST_A]!.port;
      const [unset] = await macDiffJob.run(ctxOf(lab), { target: 'site-b' });
      expect(hostileConnections).toBe(0);
      expect(String(unset && byCode(unset, 'MAC_HOST_UNREACHABLE')[0]?.evidence.reason)).toContain(`cannot open SSH to ${HOST_A}: connection refused`);
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });
});

describe('mac-diff on the lab scenario (the isolated rack: regenerated MACs)', () => {
  it('site-b: 9 of 12 drifted with the pinned-MAC snippet; site-a healthy; `all` gives both', async () => {
    const scenario = macLabScenario({ siteA: ['127.0.10.1'], siteB: ['127.0.20.1', '127.0.20.2'] });
    lab = await startMacLab({ machines: scenario.maasMachines, sites: scenario.sites });
    const reports = await macDiffJob.run(ctxOf(lab), { target: 'all' });
    expect(reports.map((r) => [r.target, r.status, r.verdict])).toEqual(scenario.sites.map((s) => [s.name, s.expected.status, s.expected.verdict]));
    const siteB = reports.find((r) => r.target === 'site-b');
    if (!siteB) throw new Error('no site-b report');
    const drifted = [...new Set(byCode(siteB, 'MAC_DRIFT').map((f) => f.evidence.hostname))];
    expect(drifted).toEqual(scenario.sites[1]?.expected.drifted);
    const summary = byCode(siteB, 'MAC_SUMMARY')[0];
    expect(summary?.fix).toContain('/maas fix-macs site-b');
    expect(String(summary?.evidence.snippet)).toMatch(/"site-b-node3" = \["52:54:00:[0-9a-f:]+", "52:54:00:[0-9a-f:]+"\]/);
    // One whoami for the region (both sites use it), machines and power parameters per site, and for site-b's drift
    // by_unknown_mac + events, and (no unknown neighbour) discovery/ counted.
    expect(lab.maas.calls).toHaveLength(8);
    expect(lab.maas.calls.filter((c) => c.op === 'whoami')).toHaveLength(1);
    expect(lab.sshConnections()).toBe(3);
    expect(lab.sshCommands()).toBe(3);
  });
});
