import { describe, expect, it } from 'vitest';
import type { HostProbe, MacSnapshot } from '../../../src/features/macs/evaluate.ts';
import { normaliseMac, type Mac } from '../../../src/core/mac.ts';
import { statusCode, statusName } from '../../../src/adapters/maas/node-status.ts';
import type { MaasInterface, MaasMachine } from '../../../src/adapters/maas/types.ts';
import { planMacRepair } from '../../../src/features/macs/repair-planner.ts';
import { planId } from '../../../src/engine/repair/plan.ts';
import type { DomainProbe } from '../../../src/adapters/ssh/virsh.ts';

function machine(id: string, status: string, macs: string[], owner: string | null = 'admin'): MaasMachine {
  const ifaces: MaasInterface[] = macs.map((mac, i) => ({ id: Number(id.replace(/\D/g, '')) * 10 + i, name: `eth${i}`, type: 'physical', mac_address: mac }));
  return {
    system_id: id,
    hostname: `node-${id}`,
    fqdn: `node-${id}.maas`,
    status: statusCode(status) as number,
    status_name: status,
    power_type: 'virsh',
    power_state: 'off',
    zone: { name: 'site-b' },
    pool: { name: 'default' },
    tag_names: [],
    ip_addresses: [],
    boot_interface: ifaces[0] ?? null,
    interface_set: ifaces,
    owner,
  };
}

const live = (...macs: string[]): DomainProbe => ({
  kind: 'found',
  nics: macs.map((mac, i) => ({ interface: `vnet${i}`, type: 'bridge', source: 'br0', model: 'virtio', mac: normaliseMac(mac) as Mac })),
});

function snapshot(entries: { m: MaasMachine; probe: DomainProbe }[]): MacSnapshot {
  const domains = new Map<string, DomainProbe>();
  const power: MacSnapshot['power'] = {};
  for (const { m, probe } of entries) {
    domains.set(m.hostname, probe);
    power[m.system_id] = { power_address: 'qemu+ssh://ops@10.0.0.11/system', power_id: m.hostname };
  }
  const hosts: Record<string, HostProbe> = { '10.0.0.11': { ok: true, domains } };
  return { site: 'site-b', machines: entries.map((e) => e.m), power, hosts };
}

const ADMIN = { username: 'admin', is_superuser: true };
const OLD = '52:54:00:b0:00:01';
const NEW = '52:54:00:81:40:17';

function planFor(status: string, owner: string | null = 'admin') {
  const m = machine('sb0001', status, [OLD], owner);
  return planMacRepair(snapshot([{ m, probe: live(NEW) }]), { maxSubjects: 50, apiUser: ADMIN });
}

const actions = (status: string, owner: string | null = 'admin') => planFor(status, owner).steps.map((s) => s.action);

describe('planMacRepair: steps by MAAS state', () => {
  it.each(['New', 'Ready', 'Allocated', 'Broken', 'Failed testing', 'Deployed'])('%s: PUT the MAC directly', (status) => {
    const plan = planFor(status);
    expect(plan.steps.map((s) => s.action)).toEqual(['set-mac']);
    expect(plan.steps[0]?.params).toMatchObject({ systemId: 'sb0001', from: OLD, to: NEW, interface: 'eth0' });
    expect(plan.refusals).toEqual([]);
  });

  it('Failed commissioning: mark_broken → PUT → commission, never mark_fixed (Ready without a successful commissioning)', () => {
    expect(actions('Failed commissioning')).toEqual(['mark-broken', 'set-mac', 'commission']);
    expect(planFor('Failed commissioning').verdict).toBe('Plan: update 1 MAC on 1 machine at site-b (1 through mark_broken → update → commission)');
  });

  it('New before MAAS 3.3 is refused with what to do; from 3.3 it takes the PUT', () => {
    const m = machine('sb0001', 'New', [OLD], null);
    const before = planMacRepair(snapshot([{ m, probe: live(NEW) }]), { maxSubjects: 50, apiUser: ADMIN, maasVersion: '3.2.9' });
    expect(before.steps).toEqual([]);
    expect(before.refusals[0]?.detail).toMatch(/^New on MAAS 3\.2\.9: before 3\.3 MAAS takes no interface edit on a New machine \(409\)/);
    const after = planMacRepair(snapshot([{ m, probe: live(NEW) }]), { maxSubjects: 50, apiUser: ADMIN, maasVersion: '3.3.0' });
    expect(after.steps.map((s) => s.action)).toEqual(['set-mac']);
  });

  it.each(['Failed deployment', 'Releasing failed', 'Failed disk erasing', 'Reserved'])(
    '%s: refused, because mark_broken would release the machine and power it off',
    (status) => {
      const plan = planFor(status);
      expect(plan.steps).toEqual([]);
      expect(plan.refusals[0]?.detail).toMatch(/mark_broken would release this machine and power it off/);
    },
  );

  it.each(['Failed to enter rescue mode', 'Failed to exit rescue mode'])('%s: refused with the true reason (mark_fixed would restore Deployed, OS cleared) and exit_rescue_mode as the way out', (status) => {
    const plan = planFor(status);
    expect(plan.steps).toEqual([]);
    expect(plan.refusals[0]?.detail).toMatch(/MAAS keeps previous_status Deployed through rescue mode, so mark_broken → mark_fixed would bring it back as Deployed, but mark_fixed clears its recorded OS/);
    expect(plan.refusals[0]?.detail).toMatch(/exit_rescue_mode/);
    expect(plan.refusals[0]?.detail).not.toMatch(/back as Ready/);
  });

  it.each(['Commissioning', 'Deploying', 'Releasing', 'Disk erasing', 'Rescue mode', 'Entering rescue mode', 'Exiting rescue mode', 'Testing'])(
    '%s: busy, refused with the reason and no step',
    (status) => {
      const plan = planFor(status);
      expect(plan.steps).toEqual([]);
      expect(plan.refusals).toEqual([expect.objectContaining({ subject: 'node-sb0001', outcome: 'refused', detail: expect.stringContaining('settled') })]);
    },
  );

  it('never plans mark_broken for a state MAAS would release (Deployed, Allocated, Deploying, Reserved, Failed deployment/releasing/disk erasing)', () => {
    for (let code = 0; code <= 22; code++) {
      const status = statusName(code);
      if (['Deployed', 'Allocated', 'Deploying', 'Reserved', 'Failed deployment', 'Releasing failed', 'Failed disk erasing'].includes(status)) {
        expect(actions(status), status).not.toContain('mark-broken');
      }
    }
    expect(actions('Failed commissioning')).toContain('mark-broken');
  });

  it('refuses the broken cycle for a machine without an owner (MAAS would answer 403)', () => {
    const plan = planFor('Failed commissioning', null);
    expect(plan.steps).toEqual([]);
    expect(plan.refusals[0]?.detail).toMatch(/only a machine's owner mark it broken/);
    expect(plan.refusals[0]?.detail).toMatch(/An admin can commission it again in MAAS \(allowed from Failed commissioning; it makes that admin the owner\)/);
    expect(plan.refusals[0]?.detail).not.toMatch(/acquire/);
  });

  it('never repairs MAC_IN_USE or MAC_AMBIGUOUS machines', () => {
    const inUse = machine('sb0002', 'Ready', [OLD]);
    const holder = machine('sb0003', 'Ready', [NEW]);
    const ambiguous = machine('sb0004', 'Ready', ['52:54:00:b0:00:04', '52:54:00:b0:01:04']);
    const fine = machine('sb0005', 'Ready', ['52:54:00:b0:00:05']);
    const plan = planMacRepair(
      snapshot([
        { m: inUse, probe: live(NEW) },
        { m: holder, probe: live(NEW) },
        { m: ambiguous, probe: live('52:54:00:99:00:01') },
        { m: fine, probe: live('52:54:00:99:00:05') },
      ]),
      { maxSubjects: 50 },
    );
    expect(plan.steps.map((s) => s.subject)).toEqual(['node-sb0005']);
    expect(plan.refusals.map((r) => [r.subject, r.detail.split(':')[0]])).toEqual([
      ['node-sb0002', 'MAC_IN_USE'],
      ['node-sb0004', 'MAC_AMBIGUOUS'],
    ]);
  });

  it('bounds the subjects of one plan: a batch, not a refusal, and says the rest waits for the next plans', () => {
    const entries = Array.from({ length: 8 }, (_v, i) => ({ m: machine(`sb010${i}`, 'Ready', [`52:54:00:b0:00:1${i}`]), probe: live(`52:54:00:99:00:1${i}`) }));
    const plan = planMacRepair(snapshot(entries), { maxSubjects: 3, apiUser: ADMIN });
    expect(new Set(plan.steps.map((s) => s.subject)).size).toBe(3);
    expect(plan.refusals).toEqual([]);
    expect(plan.deferred).toEqual(['node-sb0103', 'node-sb0104', 'node-sb0105', 'node-sb0106', 'node-sb0107']);
    expect(plan.verdict).toMatch(/^Plan 1 of 3: update 3 MACs on 3 machines at \S+; 5 more machines in the next 2 plans \(repair\.maxSubjects is 3\)$/);
  });

  it('has an id derived from its content: same world, same id; another MAC, another id', () => {
    const a = planFor('Ready');
    const b = planFor('Ready');
    expect(a.id).toMatch(/^[0-9a-f]{16}$/);
    expect(b.id).toBe(a.id);
    expect(planId('fix-macs', 'site-b', a.steps)).toBe(a.id);
    const other = planMacRepair(snapshot([{ m: machine('sb0001', 'Ready', [OLD]), probe: live('52:54:00:81:40:18') }]), { maxSubjects: 50, apiUser: ADMIN });
    expect(other.id).not.toBe(a.id);
  });

  it('plans nothing when every MAC matches, and says so', () => {
    const plan = planMacRepair(snapshot([{ m: machine('sb0001', 'Ready', [OLD]), probe: live(OLD) }]), { maxSubjects: 50, apiUser: ADMIN });
    expect(plan.steps).toEqual([]);
    expect(plan.verdict).toMatch(/^Nothing to repair at site-b/);
  });

  it('keeps secrets out: step params hold names, ids and MACs only', () => {
    const plan = planFor('Failed commissioning');
    for (const step of plan.steps) {
      for (const value of Object.values(step.params ?? {})) expect(['string', 'number']).toContain(typeof value);
    }
    expect(JSON.stringify(plan.steps)).not.toMatch(/power_pass|qemu\+ssh/);
  });
});
