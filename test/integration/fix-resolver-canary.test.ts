import { describe, expect, it } from 'vitest';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { fixResolverRepair } from '../../src/features/resolver/repair.ts';
import { machine } from '../../lab/maas-sim/index.ts';
import type { Report } from '../../src/core/report.ts';
import { executePlan } from '../../src/engine/repair/executor.ts';
import { memoryJournal } from '../../src/engine/repair/journal.ts';
import { resolverStepRunner } from '../../src/features/resolver/repair-steps.ts';
import { NODE_SUBNET, resolverSitesPerTest, type ResolverSite } from './fix-resolver-site.ts';

// fix-resolver's canary against the real rack parts (ssh2 + /bin/sh + dig, dnsmasq) and the MAAS
// simulator, which commissions as MAAS does: Ready when the machine PXE-boots from a MAC MAAS
// knows, Failed commissioning after node_timeout (30 minutes, on a clock the test moves) when not.

// No dhcpd.conf on this rack: the DHCP step has its own tests; these are about the canary.
const site = resolverSitesPerTest({ subnet: { dns_servers: ['10.20.0.2'] }, canary: 'canary-1', dhcp: 'none' });

const canary = (extra: Partial<Parameters<typeof machine>[0]> = {}) => machine({ system_id: 'cn0001', hostname: 'canary-1', status: 'Ready', macs: ['52:54:00:c0:00:01'], ...extra });
const run = (s: ResolverSite, apply: boolean) => fixResolverJob.run(s.ctx, { target: 'site-b', interactive: true, apply, requestedBy: 'terminal:ops' });
const outcomes = (r: Report | undefined) => r?.results?.map((x) => `${x.action} ${x.outcome}`);
const commissions = (s: ResolverSite) => s.writes().filter((c) => c.op === 'commission');

describe('fix-resolver: the canary commission', () => {
  it('is a step of the plan; applied, it commissions the canary after the subnet change and follows it to Ready', async () => {
    const s = await site({ machines: [canary()] });
    const [planned] = await run(s, false);
    expect(planned?.plan?.steps.map((x) => `${x.subject} ${x.action}`)).toEqual([
      `forwarder 127.0.0.1:${s.forwarderPort} verify-forwarder`,
      'subnet 10.20.0.0/24 set-subnet-dns',
      'site-b check-resolver',
      'canary canary-1 commission-canary',
    ]);
    expect(planned?.verdict).toContain('then commission the canary canary-1 and follow it to Ready');
    expect(commissions(s)).toEqual([]);

    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-resolver verified', 'commission-canary verified']);
    expect(applied?.results?.at(-1)?.detail).toMatch(/^canary canary-1 commissioned: Ready within \d+ min/);
    // The subnet PUT came first, then exactly one commission.
    expect(s.writes().map((c) => `${c.method} ${c.path}${c.op ? ` op=${c.op}` : ''}`)).toEqual([
      `PUT /MAAS/api/2.0/subnets/${NODE_SUBNET.id}/`,
      'POST /MAAS/api/2.0/machines/cn0001/ op=commission',
    ]);
  });

  it.each([
    ['Deployed', { status: 'Deployed' }, /is Deployed: commissioning would wipe what runs on it/],
    ['locked', { status: 'Deployed', locked: true }, /is locked in MAAS: it is never commissioned/],
    ['Commissioning already', { status: 'Commissioning' }, /is Commissioning: MAAS commissions only New, Ready, Broken or Failed commissioning/],
  ] as const)('a canary that is %s is refused in the plan; the rest of the plan stands and runs', async (_what, extra, reason) => {
    const s = await site({ machines: [canary(extra as never)] });
    const [planned] = await run(s, false);
    expect(planned?.plan?.steps.map((x) => x.action)).toEqual(['verify-forwarder', 'set-subnet-dns', 'check-resolver']);
    const plan = await fixResolverRepair.plan(s.ctx, 'site-b');
    expect(plan.refusals).toEqual([{ subject: 'canary canary-1', action: 'commission-canary', outcome: 'refused', detail: expect.stringMatching(reason) }]);
    expect(planned?.verdict).toContain('(no canary: refused, see below)');
    const [applied] = await run(s, true);
    expect(outcomes(applied)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-resolver verified', 'commission-canary refused']);
    expect(commissions(s)).toEqual([]);
  });

  it('a canary that fails commissioning: the result reported, the subnet change kept, never retried; progress posted while it runs', async () => {
    let clock = Date.parse('2026-07-24T10:00:00Z');
    // The machine PXE-boots from a MAC MAAS does not record: MAAS never hears from it, and fails it after node_timeout.
    const s = await site({ machines: [canary({ live_boot_mac: '52:54:00:99:99:99' } as never)], maasOptions: { clock: () => clock } });
    const plan = await fixResolverRepair.plan(s.ctx, 'site-b');
    const progress: string[] = [];
    const runner = resolverStepRunner(s.config.sites['site-b']!, s.ctx.adapters, {
      canary: { pollMs: 60_000, timeoutMs: 40 * 60_000, now: () => clock, sleep: async (ms) => void (clock += ms), progress: async (line) => void progress.push(line) },
    });
    const results = await executePlan(plan, { runner, journal: memoryJournal(), maxSubjects: 50 });
    expect(results.map((r) => `${r.action} ${r.outcome}`)).toEqual(['verify-forwarder verified', 'set-subnet-dns verified', 'check-resolver verified', 'commission-canary failed']);
    expect(results.at(-1)?.detail).toMatch(/^canary canary-1 did not commission: Failed commissioning: Node operation 'Commissioning' timed out after 30 minutes\. The subnet change stays in place and nothing is retried/);
    expect(progress[0]).toBe('Canary canary-1: commissioning started (cn0001)');
    expect(progress.some((l) => /^Canary canary-1: Commissioning/.test(l))).toBe(true);
    expect(commissions(s)).toHaveLength(1);
    expect(s.maas.state.subnets.find((x) => x.id === NODE_SUBNET.id)).toMatchObject({ dns_servers: ['127.0.0.1'], allow_dns: false });
  });
});
