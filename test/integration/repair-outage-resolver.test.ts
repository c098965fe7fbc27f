import { Resolver } from 'node:dns/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { fixResolverRepair } from '../../src/features/resolver/repair.ts';
import { onPath } from '../../lab/rack-sim/index.ts';
import { startOutageRig, type OutageRig } from '../../lab/repair-outage.ts';
import { OUTAGE_LOCK, OUTAGE_MS, countBy, waitFor } from '../helpers/outage.ts';
import { startResolverSite, type ResolverSite } from './fix-resolver-site.ts';

// fix-resolver under a Redis outage longer than the jobs' lock, struck while rack.forwarderInstall
// runs over SSH, with MAAS answering in 1.5 s: the install runs once on the rack, the subnet PUT
// reaches MAAS once, and the repair finishes after Redis returns. Real parts: redis-server (AOF),
// BullMQ, SSH to /bin/sh, dig, dnsmasq, the MAAS simulator.

beforeAll(() => {
  for (const program of ['dig', 'dnsmasq']) {
    if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq`);
  }
});

let site: ResolverSite | undefined;
let rig: OutageRig | undefined;
afterEach(async () => {
  await rig?.close();
  await site?.close();
  rig = undefined;
  site = undefined;
});

describe('fix-resolver: Redis away past the lock mid-repair', () => {
  it('the install runs once, the subnet PUT is sent once, and the repair finishes after Redis returns', async () => {
    // The install starts the forwarder, then holds the SSH command a moment: Redis dies during it.
    site = await startResolverSite({ forwarder: 'stopped', install: (daemon) => `${daemon} && sleep 1` });
    rig = await startOutageRig({ jobs: [fixResolverJob], context: { config: site.config, adapters: site.ctx.adapters }, lock: OUTAGE_LOCK });
    const plan = await fixResolverRepair.plan(site.ctx, 'site-b');
    expect(plan.steps.map((s) => s.action)).toEqual(['install-forwarder', 'verify-forwarder', 'set-subnet-dns', 'check-dhcp', 'check-resolver']);

    site.maas.setLatency(1_500);
    await rig.approveAndQueue(plan);
    await waitFor(() => site!.installs().length > 0, 60_000, 'rack.forwarderInstall reaching the rack');
    // Redis dies while the install holds its SSH command, after the forwarder it started answers.
    await waitFor(() => forwarderAnswers(site!.forwarderPort), 30_000, 'the installed forwarder answering');
    await rig.killRedis();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await rig.restartRedis();

    const stored = await rig.finished(plan.id, 120_000);
    expect(stored.results?.map((r) => `${r.action} ${r.outcome}`), JSON.stringify(stored.results)).toEqual(['install-forwarder verified', 'verify-forwarder verified', 'set-subnet-dns verified', 'check-dhcp verified', 'check-resolver verified']);
    expect(site.installs()).toHaveLength(1);
    expect(countBy(site.writes(), (c) => `${c.method} ${c.path}`)).toEqual({ 'PUT /MAAS/api/2.0/subnets/20/': 1, 'PUT /MAAS/api/2.0/ipranges/7/': 1 });

    await waitFor(() => rig!.said.summaries.length > 0, 10_000, 'the summary');
    expect(rig.said.thread.filter((t) => t.startsWith('Resuming after a restart'))).toHaveLength(1);
    expect(rig.said.summaries).toHaveLength(1);
    expect(rig.said.errors).toEqual([]);
  }, 180_000);
});

/** One SOA query for maas-internal at the forwarder the install starts; true once it answers. */
async function forwarderAnswers(port: number): Promise<boolean> {
  const resolver = new Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  try {
    await resolver.resolveSoa('maas-internal');
    return true;
  } catch {
    return false;
  }
}
