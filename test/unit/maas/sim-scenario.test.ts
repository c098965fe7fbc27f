import { describe, expect, it } from 'vitest';
import { NODE_STATUS, statusCode, statusName } from '../../../src/adapters/maas/node-status.ts';
import { machine, normaliseMac, rackController, scenario, virshPower } from '../../../lab/maas-sim/scenario.ts';

describe('node status names', () => {
  it('match MAAS for every code, both ways', () => {
    expect(statusName(NODE_STATUS.FAILED_COMMISSIONING)).toBe('Failed commissioning');
    expect(statusName(NODE_STATUS.FAILED_RELEASING)).toBe('Releasing failed');
    expect(statusName(22)).toBe('Failed testing');
    for (let code = 0; code <= 22; code++) expect(statusCode(statusName(code))).toBe(code);
    expect(statusCode('deployed')).toBe(6);
    expect(statusCode('nonsense')).toBeUndefined();
  });
});

describe('normaliseMac', () => {
  it.each([
    ['52:54:00:AB:CD:EF', '52:54:00:ab:cd:ef'],
    ['52-54-00-ab-cd-ef', '52:54:00:ab:cd:ef'],
    ['5254.00ab.cdef', '52:54:00:ab:cd:ef'],
    ['2:54:0:ab:cd:ef', '02:54:00:ab:cd:ef'],
  ])('%s → %s', (input, output) => {
    expect(normaliseMac(input)).toBe(output);
  });
});

describe('scenario builders', () => {
  it('gives interfaces ids unique across machines and racks, boot interfaces following', () => {
    const s = scenario({
      machines: [machine({ system_id: 'a', hostname: 'a', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'] }), machine({ system_id: 'b', hostname: 'b', macs: ['52:54:00:00:00:03'] })],
      rackControllers: [rackController({ system_id: 'r', hostname: 'rack', macs: ['52:54:00:00:00:09'] })],
    });
    const ids = [...s.machines, ...s.rackControllers].flatMap((n) => n.interfaces.map((i) => i.id));
    expect(new Set(ids).size).toBe(4);
    expect(ids.every((id) => id > 0)).toBe(true);
    expect(s.machines[0]?.boot_interface_id).toBe(s.machines[0]?.interfaces[0]?.id);
    expect(s.machines.map((m) => m.id)).toEqual([1, 2]);
  });

  it('defaults the owner as MAAS has it: none for New and Ready, the user otherwise', () => {
    expect(machine({ system_id: 'a', hostname: 'a', status: 'Ready' }).owner).toBeNull();
    expect(machine({ system_id: 'a', hostname: 'a', status: 'New' }).owner).toBeNull();
    expect(machine({ system_id: 'a', hostname: 'a', status: 'Deployed' }).owner).toBe('admin');
    expect(scenario({ user: 'ops', machines: [machine({ system_id: 'a', hostname: 'a', status: 'Deployed' })] }).machines[0]?.owner).toBe('ops');
  });

  it('is plain data: a JSON round trip changes nothing, and the input is not shared', () => {
    const input = [machine({ system_id: 'a', hostname: 'a', status: 'Failed commissioning', macs: ['52:54:00:00:00:01'], power: virshPower('172.16.1.28', 'vm-a') })];
    const s = scenario({ machines: input });
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
    s.machines[0]!.status = 4;
    expect(input[0]?.status).toBe(NODE_STATUS.FAILED_COMMISSIONING);
    expect(s.machines[0]?.power_parameters).toMatchObject({ power_address: 'qemu+ssh://ubuntu@172.16.1.28/system', power_id: 'vm-a' });
  });
});
