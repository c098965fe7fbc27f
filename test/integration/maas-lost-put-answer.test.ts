import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Adapters } from '../../src/adapters/adapters.ts';
import type { KubeClient } from '../../src/adapters/kube/types.ts';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import type { ClusterConfig, SiteConfig } from '../../src/core/config.ts';
import { Secret } from '../../src/core/secret.ts';
import { executePlan, type StepRunner } from '../../src/engine/repair/executor.ts';
import { fencedAdapters } from '../../src/engine/repair/fenced-adapters.ts';
import { memoryJournal } from '../../src/engine/repair/journal.ts';
import type { RepairPlan } from '../../src/engine/repair/plan.ts';
import type { PlanStep } from '../../src/engine/repair/plan-step.ts';
import type { WriteRoute } from '../../src/engine/repair/write-guard.ts';
import { dnsStepRunner } from '../../src/features/dns/repair-steps.ts';
import { macStepRunner } from '../../src/features/macs/repair-steps.ts';
import { resolverStepRunner } from '../../src/features/resolver/repair-steps.ts';
import { dnsResource, machine, randomApiKey, scenario, startMaasSimulator, subnet, type MaasSimulator } from '../../lab/maas-sim/index.ts';

/*
 * A PUT whose answer is lost (MAAS committed it, then the connection went) is resolved by reading
 * the object back, not reported failed and not sent again: MAAS spends an OAuth nonce once a
 * request succeeds, so a resent copy would be refused 401 "Nonce already used". Each step runs
 * through the executor, the journal and the fenced adapters, as a repair does.
 */

let sim: MaasSimulator;
let maas: ClosableMaasClient;

beforeEach(async () => {
  const key = randomApiKey();
  sim = await startMaasSimulator({
    scenario: scenario({
      machines: [machine({ system_id: 'br0001', hostname: 'east-e02', status: 'Broken', owner: 'admin', macs: ['52:54:00:00:00:01'] })],
      dnsresources: [dnsResource({ id: 11, fqdn: 'prod-k8s.maas.example', ips: ['10.11.135.36'] })],
      subnets: [subnet({ id: 20, cidr: '10.20.0.0/24', dns_servers: ['10.20.0.2'], allow_dns: true, allow_proxy: false, managed: true })],
    }),
    apiKeys: [key],
  });
  maas = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(key, 'test') }, { backoffMs: 1, timeoutMs: 2_000 });
});

afterEach(async () => {
  await maas.close();
  await sim.close();
});

const SITE = { name: 'site-b', maas: 'region-a', machines: {}, vmHostDefaults: {}, vmHosts: {}, rack: { forwarder: { host: '127.0.0.1', port: 5353 } } } as unknown as SiteConfig;

interface Case {
  name: string;
  path: RegExp;
  step: PlanStep;
  runner: (adapters: Adapters) => StepRunner;
  /** What MAAS holds after the PUT took effect. */
  applied: () => unknown;
  expected: unknown;
  verified: RegExp;
}

const CASES: Case[] = [
  {
    name: 'fix-dns set-dns-ips',
    path: /\/dnsresources\/11\//,
    step: { subject: 'prod-k8s.maas.example', action: 'set-dns-ips', detail: 'set IPs', params: { resourceId: 11, from: ['10.11.135.36'], to: ['10.11.135.40'] } },
    // set-dns-ips never touches the cluster: a kube client that is never called.
    runner: (a) => dnsStepRunner(a.maas('region-a'), a.kube({} as ClusterConfig)),
    applied: () => sim.state.dnsresources.find((r) => r.id === 11)?.ip_addresses,
    expected: ['10.11.135.40'],
    verified: /^resource 11: 10\.11\.135\.36 → 10\.11\.135\.40 \(read back: it took effect, though its answer was lost \(MAAS region-a .*PUT dnsresources\/11\/.*\); not sent again\)$/,
  },
  {
    name: 'fix-resolver set-subnet-dns',
    path: /\/subnets\/20\//,
    step: {
      subject: 'subnet 10.20.0.0/24',
      action: 'set-subnet-dns',
      detail: 'point the subnet at the forwarder',
      params: {
        subnetId: 20,
        cidr: '10.20.0.0/24',
        from: { dns_servers: ['10.20.0.2'], allow_dns: true, allow_proxy: false, managed: true },
        to: { dns_servers: ['127.0.0.1'], allow_dns: false, allow_proxy: false, managed: true },
      },
    },
    runner: (a) => resolverStepRunner(SITE, a),
    applied: () => {
      const s = sim.state.subnets.find((x) => x.id === 20);
      return s && { dns_servers: s.dns_servers, allow_dns: s.allow_dns, allow_proxy: s.allow_proxy };
    },
    expected: { dns_servers: ['127.0.0.1'], allow_dns: false, allow_proxy: false },
    verified: /^subnet 20: dns_servers 10\.20\.0\.2, allow_dns on.* → dns_servers 127\.0\.0\.1, allow_dns off.* \(read back: it took effect, though its answer was lost \(MAAS region-a .*PUT subnets\/20\/.*\); not sent again\)$/,
  },
  {
    name: 'fix-macs set-mac',
    path: /\/nodes\/br0001\/interfaces\//,
    step: {
      subject: 'east-e02',
      action: 'set-mac',
      detail: 'set the boot MAC',
      params: { systemId: 'br0001', hostname: 'east-e02', interfaceId: 1, interface: 'eth0', from: '52:54:00:00:00:01', to: '52:54:00:aa:bb:cc' },
    },
    runner: (a) => macStepRunner(a.maas('region-a')),
    applied: () => sim.state.machines[0]?.interfaces[0]?.mac_address,
    expected: '52:54:00:aa:bb:cc',
    verified: /^eth0: 52:54:00:00:00:01 → 52:54:00:aa:bb:cc \(read back: it took effect, though its answer was lost \(MAAS region-a .*PUT nodes\/br0001\/interfaces\/1\/.*\); not sent again\)$/,
  },
];

async function runThroughExecutor(c: Case) {
  const route: WriteRoute = {};
  const adapters = fencedAdapters({ maas: () => maas, kube: () => ({}) as KubeClient, ssh: {} as Adapters['ssh'] }, route);
  const journal = memoryJournal();
  const plan = { id: 'p-lost-put', kind: 'fix-dns', target: 't', steps: [c.step], refusals: [], findings: [], verdict: '' } as unknown as RepairPlan;
  const [result] = await executePlan(plan, { runner: c.runner(adapters), journal, maxSubjects: 50, route });
  return { result, writes: (await journal.get(0))?.writes };
}

const puts = () => sim.calls.filter((x) => x.method === 'PUT');

describe('a PUT whose answer is lost after MAAS committed it', () => {
  it.each(CASES)('$name: read back, verified, one PUT, nothing refused', async (c) => {
    if (c.step.action === 'set-mac') expect(sim.state.machines[0]?.interfaces[0]?.id).toBe(1);
    sim.injectFaults({ dropAfterCommit: true, count: 1, method: 'PUT', path: c.path });

    const { result, writes } = await runThroughExecutor(c);

    expect(result?.outcome).toBe('verified');
    expect(result?.detail).toMatch(c.verified);
    expect(c.applied()).toEqual(c.expected);
    expect(puts()).toHaveLength(1);
    expect(sim.calls.filter((x) => x.status === 401)).toEqual([]);
    // The journal keeps the truth of the send itself: no answer, outcome unknown.
    expect(writes?.map((w) => w.state)).toEqual(['unknown']);
  });

  it.each(CASES)('$name: connection dropped before MAAS did anything: failed, one PUT, MAAS unchanged', async (c) => {
    const before = structuredClone(c.applied());
    sim.injectFaults({ drop: true, count: 1, method: 'PUT', path: c.path });

    const { result } = await runThroughExecutor(c);

    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(/unreachable|did not answer/);
    expect(c.applied()).toEqual(before);
    expect(puts()).toHaveLength(1);
  });

  it.each(CASES)('$name: MAAS answers 400 (a refusal): failed without a read-back, one PUT', async (c) => {
    sim.injectFaults({ status: 400, body: { ip_addresses: ['refused by the test'] }, count: 1, method: 'PUT', path: c.path });

    const { result, writes } = await runThroughExecutor(c);

    expect(result?.outcome).toBe('failed');
    expect(result?.detail).toMatch(/answered 400 to PUT/);
    expect(puts()).toHaveLength(1);
    const afterPut = sim.calls.slice(sim.calls.findIndex((x) => x.method === 'PUT') + 1);
    expect(afterPut).toEqual([]);
    expect(writes?.map((w) => w.state)).toEqual(['refused']);
  });
});
