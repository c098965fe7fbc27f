import { checkJob } from '../../jobs/check-job.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { dnsCheck } from '../../src/features/dns/index.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, randomApiKey, scenario, startMaasSimulator } from '../../lab/maas-sim/index.ts';
import { startLabRack, type LabRack } from '../../lab/rack-sim/index.ts';
import type { RackMode } from '../../lab/rack-sim/index.ts';
import { generateKeyPair } from '../../lab/ssh-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import type { Finding, Report } from '../../src/core/report.ts';
import { createSshConnector } from '../../src/adapters/ssh/connector.ts';

const dnsCheckJob = checkJob(dnsCheck);

/*
 * dns-check's client view: MAAS's record (the simulator holds prod's wiped record) beside what a
 * client gets for the API name from a resolver, asked with dig on the site's rack over the pinned
 * SSH session or from the bot. The rack's resolver holds the old answer with a TTL counting down.
 */

const FQDN = 'prod-k8s.maas.example';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function check(options: { via: 'rack' | 'direct'; ttl: number; mode?: RackMode }): Promise<{ report: Report; rack: LabRack }> {
  const lab = dnsLabScenario();
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  cleanups.push(() => maas.close());
  const prod = lab.clusters.find((c) => c.name === 'prod')!;
  const kube = await startKubeSimulator({ state: structuredClone(prod.kube) });
  cleanups.push(() => kube.close());
  const key = generateKeyPair('dns-client-view');
  const rack = await startLabRack({ mode: options.mode ?? 'healthy', authorizedKey: key.publicKey, records: [{ name: FQDN, ips: ['10.11.135.36'], ttl: options.ttl }] });
  cleanups.push(() => rack.close());
  const config = {
    maas: { 'region-a': { url: maas.url, apiKey: 'env:MAAS_KEY' } },
    sites: { 'site-b': { maas: 'region-a', rack: rack.rackConfig('env:RACK_KEY') } },
    clusters: {
      prod: { maas: 'region-a', kube: { kubeconfig: 'env:PROD_KUBECONFIG' }, clientView: { resolver: `${rack.resolver.host}:${rack.resolver.port}`, via: options.via, ...(options.via === 'rack' ? { site: 'site-b' } : {}) } },
    },
  };
  const env = { MAAS_KEY: apiKey, RACK_KEY: key.privateKey, PROD_KUBECONFIG: kubeconfigFor(kube) };
  const parsed = parseConfigText(JSON.stringify(config), { path: 'test.yaml', env }).config;
  const adapters: Adapters = {
    maas: (region) => createMaasClient(parsed.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
    kube: (cluster) => createKubeClient(cluster),
    ssh: createSshConnector(),
  };
  const [report] = await dnsCheckJob.run({ config: parsed, adapters, log: silentLogger() }, { target: 'prod' });
  return { report: report!, rack };
}

const view = (r: Report): Finding | undefined => r.findings.find((f) => f.code === 'DNS_CLIENT_VIEW');

describe('dns-check: what clients get for the API name', () => {
  it('MAAS record empty, the rack resolver still serves the old answer: TTL left, asked with dig on the rack in one SSH session', async () => {
    const { report, rack } = await check({ via: 'rack', ttl: 300 });
    expect(report.verdict).toMatch(/^API record WIPED, empty-set hash cached/);
    const f = view(report)!;
    expect(f.severity).toBe('warning');
    expect(f.summary).toMatch(/^MAAS record empty, DNS still serving cached\/old answers \(TTL left: (29\d|300) s\): /);
    expect(f.evidence).toMatchObject({ fqdn: FQDN, maasRecord: [], served: ['10.11.135.36'], status: 'NOERROR', state: 'still-serving' });
    expect(String(f.evidence.command)).toMatch(/^dig @127\.0\.0\.1 -p \d+ prod-k8s\.maas\.example A \+time=2 \+tries=1$/);
    expect(rack.ssh.authenticated).toBe(1);
    expect(rack.resolver.queries).toBe(1);
  });

  it('MAAS record empty and the cache ran out: DNS already serving nothing, the outage has reached clients', async () => {
    const { report } = await check({ via: 'rack', ttl: 0 });
    const f = view(report)!;
    expect(f.summary).toMatch(/^MAAS record empty, DNS already serving nothing: .* answers nothing \(NOERROR\); the outage has reached clients$/);
    expect(f.evidence).toMatchObject({ served: [], ttlLeft: null, state: 'serving-nothing' });
  });

  it('asked from the bot (via: direct): the same view without SSH', async () => {
    const { report, rack } = await check({ via: 'direct', ttl: 120 });
    expect(view(report)?.evidence).toMatchObject({ state: 'still-serving', served: ['10.11.135.36'] });
    expect(rack.ssh.authenticated).toBe(0);
  });

  it('a resolver that never answers (dig times out): one line, the verdict still stands on MAAS\'s record', async () => {
    const { report } = await check({ via: 'rack', ttl: 300, mode: 'silent' });
    expect(report.verdict).toMatch(/^API record WIPED, empty-set hash cached/);
    expect(report.status).toBe('critical');
    const f = view(report)!;
    expect(f.severity).toBe('info');
    expect(f.summary).toMatch(/^What clients get for prod-k8s\.maas\.example from 127\.0\.0\.1:\d+ could not be read \(.*timed out.*\); the verdict stands on MAAS's record$/);
  });
});

describe('clusters.<name>.clientView config', () => {
  const base = { maas: { r: { url: 'http://127.0.0.1:1/MAAS', apiKey: 'env:K' } }, sites: { s: { maas: 'r', rack: { resolver: '10.0.0.2', probe: 'direct' } } } };
  it('via: rack needs a site with rack.ssh; the error names the key and the fix', () => {
    const text = JSON.stringify({ ...base, clusters: { c: { maas: 'r', clientView: { resolver: '10.0.0.2', via: 'rack', site: 's' } } } });
    expect(() => parseConfigText(text, { path: 'x.yaml', env: { K: 'a:b:c' } })).toThrow(/clusters\.c\.clientView\.site: site "s" has no rack\.ssh/);
    const noSite = JSON.stringify({ ...base, clusters: { c: { maas: 'r', clientView: { resolver: '10.0.0.2', via: 'rack' } } } });
    expect(() => parseConfigText(noSite, { path: 'x.yaml', env: { K: 'a:b:c' } })).toThrow(/clusters\.c\.clientView\.site: required when via is rack/);
  });

  it('via defaults to direct, the port to 53', () => {
    const text = JSON.stringify({ ...base, clusters: { c: { maas: 'r', clientView: { resolver: '10.0.0.53' } } } });
    expect(parseConfigText(text, { path: 'x.yaml', env: { K: 'a:b:c' } }).config.clusters.c?.clientView).toEqual({ resolverHost: '10.0.0.53', resolverPort: 53, via: 'direct' });
  });
});
