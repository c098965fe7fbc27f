import { describe, expect, it } from 'vitest';
import { ChatopsError } from '../../../src/core/errors.ts';
import { parsePlanRecord } from '../../../src/engine/repair/plan-record.ts';
import type { PlanStep } from '../../../src/engine/repair/plan-step.ts';
import { planReport, withId, type RepairPlan } from '../../../src/engine/repair/plan.ts';

const subnet = { dns_servers: ['10.20.0.53'], allow_dns: false, allow_proxy: true, managed: true };
/** One step of every kind, as the planners write them. */
const EVERY_KIND: PlanStep[] = [
  { subject: 'vm1', action: 'mark-broken', detail: 'd', params: { systemId: 'abc', hostname: 'vm1', status: 'Failed commissioning', owner: 'admin' } },
  { subject: 'vm1', action: 'set-mac', detail: 'd', params: { systemId: 'abc', hostname: 'vm1', interfaceId: 7, interface: 'eth0', from: '', to: '52:54:00:00:00:01' } },
  { subject: 'vm1', action: 'commission', detail: 'd', params: { systemId: 'abc', hostname: 'vm1' } },
  { subject: 'vm1', action: 'mark-fixed', detail: 'd', params: { systemId: 'abc', hostname: 'vm1' } },
  { subject: 'api.example', action: 'set-dns-ips', detail: 'd', params: { resourceId: 41, fqdn: 'api.example', from: [], to: ['10.0.0.1'] } },
  { subject: 'api.example', action: 'set-dns-hash', detail: 'd', params: { namespace: 'ns', maasCluster: 'mc', fqdn: 'api.example', from: null, to: 'ff', ips: ['10.0.0.1'] } },
  { subject: 'forwarder f', action: 'install-forwarder', detail: 'd', params: { site: 's', forwarder: '10.20.0.53', commandSha256: '0123456789abcdef' } },
  { subject: 'forwarder f', action: 'verify-forwarder', detail: 'd', params: { site: 's', forwarder: '10.20.0.53', zone: 'maas-internal' } },
  { subject: 'subnet x', action: 'set-subnet-dns', detail: 'd', params: { subnetId: 3, cidr: '10.20.0.0/24', from: { ...subnet, allow_dns: true }, to: subnet } },
  { subject: 'subnet x', action: 'check-dhcp', detail: 'd', params: { site: 's', subnetId: 3, cidr: '10.20.0.0/24', expect: ['10.20.0.53'] } },
  { subject: 's', action: 'check-resolver', detail: 'd', params: { site: 's', forwarder: '10.20.0.53', subnetId: 3 } },
  { subject: 'canary c', action: 'commission-canary', detail: 'd', params: { site: 's', systemId: 'c1', hostname: 'c' } },
];

function recordOf(steps: unknown[]): { plan: RepairPlan; json: string } {
  const plan = withId({ kind: 'fix-macs', target: 's', steps: steps as PlanStep[], refusals: [], findings: [], verdict: 'Plan' });
  return { plan, json: JSON.stringify({ plan, report: planReport(plan, new Date(0)) }) };
}

function refusal(json: string): ChatopsError {
  try {
    parsePlanRecord('0123456789abcdef', json);
  } catch (err) {
    if (err instanceof ChatopsError) return err;
    throw err;
  }
  throw new Error('the record was accepted');
}

describe('a stored plan read back from Redis', () => {
  it('keeps every kind of step exactly as it was planned', () => {
    const { plan, json } = recordOf(EVERY_KIND);
    expect(parsePlanRecord(plan.id, json).plan).toEqual(plan);
  });

  it.each([
    ['a step kind this version does not know', { subject: 'vm1', action: 'update_mac', detail: 'd', params: { systemId: 'abc' } }, /steps\[0\]\.action/],
    ['a parameter of the wrong type', { ...EVERY_KIND[1], params: { ...EVERY_KIND[1]!.params, interfaceId: '7' } }, /steps\[0\]\.params\.interfaceId/],
    ['a parameter missing', { subject: 'vm1', action: 'commission', detail: 'd', params: { hostname: 'vm1' } }, /steps\[0\]\.params\.systemId/],
    ['a parameter this version does not know', { ...EVERY_KIND[2], params: { systemId: 'abc', hostname: 'vm1', force: true } }, /force/],
    ['no parameters at all', { subject: 'vm1', action: 'commission', detail: 'd' }, /steps\[0\]\.params/],
  ])('is refused, never run, with %s', (_what, step, where) => {
    const error = refusal(recordOf([step]).json);
    expect(error.code).toBe('GUARD_REFUSED');
    expect(error.message).toMatch(/^plan 0123456789abcdef as stored cannot be run by this version \(/);
    expect(error.message).toMatch(where);
    expect(error.hint).toBe('Run the /maas fix command again for a fresh plan');
  });

  it('is refused when it is not JSON', () => {
    expect(refusal('{"plan": ').message).toBe('plan 0123456789abcdef as stored cannot be run by this version (it is not valid JSON), so it was not run');
  });
});
