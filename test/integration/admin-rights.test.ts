import { checkJob } from '../../jobs/check-job.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dnsCheck } from '../../src/features/dns/index.ts';
import { fixDnsJob } from '../../jobs/fix-dns.ts';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import type { JobContext } from '../../src/engine/job-types.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, machine, randomApiKey, scenario, startMaasSimulator, virshPower } from '../../lab/maas-sim/index.ts';
import { onPath } from '../../lab/rack-sim/index.ts';
import { startMacLab } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import type { Report } from '../../src/core/report.ts';
import { startResolverSite } from './fix-resolver-site.ts';

const dnsCheckJob = checkJob(dnsCheck);
const resolverCheckJob = checkJob(resolverCheck);
const macDiffJob = checkJob(macDiffCheck);

// Real parts: the MAAS simulator (users/?op=whoami, 403 for a non-admin as MAAS answers it), SSH VM
// hosts, the ssh2 rack running a real shell with dig and dnsmasq, and the Kubernetes simulator.

beforeAll(() => {
  for (const program of ['dig', 'dnsmasq']) {
    if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq`);
  }
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const reasonOf = (r: Report | undefined) => String(r?.findings.find((f) => f.code === 'PROBE_FAILED')?.evidence.reason ?? '');
const whoamis = (calls: { path: string; op?: string }[]) => calls.filter((c) => c.path.endsWith('/users/') && c.op === 'whoami').length;

async function macSite(admin: boolean) {
  const domains = [{ name: 'dom-n1', nics: [{ mac: '52:54:00:aa:00:15' }] }];
  const lab = await startMacLab({
    machines: [machine({ system_id: 'n1', hostname: 'n1-vm', zone: 'site-b', status: 'Ready', macs: ['52:54:00:00:00:15'], power: virshPower('127.0.0.1', 'dom-n1') })],
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: '127.0.0.1', state: { domains } }] }],
  });
  cleanups.push(() => lab.close());
  lab.maas.state.userIsAdmin = admin;
  lab.maas.state.user = 'viewer';
  return { lab, ctx: { config: lab.config, adapters: lab.adapters, log: silentLogger() } satisfies JobContext };
}

describe('commands that need a MAAS admin refuse a non-admin key before anything is sent or run', () => {
  it('mac-diff: no power_parameters, no SSH; the report names the right, the MAAS call and what to configure', async () => {
    const { lab, ctx } = await macSite(false);
    const [report] = await macDiffJob.run(ctx, { target: 'site-b' });
    expect(report?.verdict).toBe('Could not check site-b');
    expect(reasonOf(report)).toBe(
      "mac-diff needs a MAAS admin and the API key for MAAS region-a is viewer's, who is not one: nothing was sent or run. MAAS lets only superusers do GET machines/?op=power_parameters (the virsh power addresses; they carry BMC and virsh passwords) (api/nodes.py: power_parameters is an @admin_method). Set maas.region-a.apiKey to the API key of a MAAS admin of that region (`maas apikey --username=<admin>`); dns-check and resolver-check work with any key",
    );
    expect(lab.maas.calls.map((c) => c.op ?? c.path)).toEqual(['whoami']);
    expect(lab.sshConnections()).toBe(0);
  });

  it('fix-macs plans and applies with one whoami per region (cached), and an admin key goes through', async () => {
    const { lab, ctx } = await macSite(true);
    const [report] = await fixMacsJob.run(ctx, { target: 'site-b', interactive: true, apply: true, requestedBy: 'terminal:ops' });
    expect(report?.results?.map((r) => r.outcome)).toEqual(['verified']);
    // Planned, re-planned before applying, and each step guarded: MAAS was asked once.
    expect(whoamis(lab.maas.calls)).toBe(1);
  });

  it('fix-resolver: refused before any dig on the rack or forwarderInstall, and no subnet PUT; resolver-check still works', async () => {
    const s = await startResolverSite({ forwarder: 'stopped', install: 'daemon' });
    cleanups.push(() => s.close());
    s.maas.state.userIsAdmin = false;
    const [report] = await fixResolverJob.run(s.ctx, { target: 'site-b', interactive: true, apply: true, requestedBy: 'terminal:ops' });
    expect(report?.verdict).toBe('Could not plan fix-resolver site-b');
    expect(reasonOf(report)).toMatch(/^fix-resolver needs a MAAS admin .*PUT subnets\/<id>\/ \(api\/subnets\.py: update asks NodePermission\.admin, which auth\/local\.py grants only to superusers\)\. Set maas\.region-a\.apiKey/);
    expect(s.ssh.commands).toEqual([]);
    expect(s.installs()).toEqual([]);
    expect(s.writes()).toEqual([]);
    const [check] = await resolverCheckJob.run(s.ctx, { target: 'site-b' });
    expect(check?.findings.map((f) => f.code)).toContain('RESOLVER_SERVFAIL');
    expect(check?.findings.map((f) => f.code)).not.toContain('PROBE_FAILED');
  });

  it('fix-dns: refused before the record is touched; dns-check still works with the same key', async () => {
    const lab = dnsLabScenario();
    const prod = lab.clusters.find((c) => c.name === 'prod');
    if (!prod) throw new Error('no prod in the DNS lab');
    const apiKey = randomApiKey();
    const maas = await startMaasSimulator({ scenario: scenario({ userIsAdmin: false, dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
    cleanups.push(() => maas.close());
    const kube = await startKubeSimulator({ state: structuredClone(prod.kube) });
    cleanups.push(() => kube.close());
    const yaml = `maas:\n  region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY }\nclusters:\n  prod: { maas: region-a, kube: { kubeconfig: env:PROD_KUBECONFIG } }\n`;
    const { config } = parseConfigText(yaml, { path: 'test.yaml', env: { MAAS_KEY: apiKey, PROD_KUBECONFIG: kubeconfigFor(kube) } });
    const adapters: Adapters = {
      maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
      kube: (cluster) => createKubeClient(cluster),
      ssh: { connect: () => Promise.reject(new Error('no SSH here')) },
    };
    const ctx: JobContext = { config, adapters, log: silentLogger() };
    const [report] = await fixDnsJob.run(ctx, { target: 'prod', interactive: true, apply: true, requestedBy: 'terminal:ops' });
    expect(reasonOf(report)).toMatch(/^fix-dns needs a MAAS admin .*PUT dnsresources\/<id>\//);
    expect(maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    expect(kube.calls.filter((c) => c.method !== 'GET')).toEqual([]);
    const [check] = await dnsCheckJob.run(ctx, { target: 'prod' });
    expect(check?.findings.map((f) => f.code)).toContain('DNS_RECORD_EMPTY');
  });
});
