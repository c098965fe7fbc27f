import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { maasOAuthHeader } from '../../src/adapters/maas/oauth-header.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, virshPower, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { recordedAnswers } from '../helpers/maas-answers.ts';

const rows = recordedAnswers();
const recordedList = rows.find((r) => r.label === 'machines-admin-all')!;
const recorded = JSON.parse(recordedList.body) as Record<string, unknown>[];

let sim: MaasSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function listMachinesRaw(version: string, count: number): Promise<string> {
  const key = randomApiKey();
  const machines = Array.from({ length: count }, (_, n) =>
    machine({
      system_id: `m${String(n).padStart(5, '0')}`,
      hostname: `east-e${n}`,
      status: 'Ready',
      macs: [`52:54:00:10:${(n >> 8).toString(16).padStart(2, '0')}:${(n & 255).toString(16).padStart(2, '0')}`],
      ...{ power: virshPower('127.0.0.2', `east-e${n}`) },
    }),
  );
  sim = await startMaasSimulator({ scenario: scenario({ version, machines }), apiKeys: [key] });
  const url = `${sim.url}/api/2.0/machines/`;
  const res = await request(url, { headers: { authorization: maasOAuthHeader(key, { method: 'GET', url }) } });
  expect(res.statusCode).toBe(200);
  return res.body.text();
}

describe('the simulator renders machine JSON in the real shape and size', () => {
  it('3.4.10: the same fields as the recorded machines (machines-admin-all), ip_addresses besides', async () => {
    const [one] = JSON.parse(await listMachinesRaw('3.4.10', 1)) as Record<string, unknown>[];
    const real = new Set(Object.keys(recorded[0]!));
    const ours = new Set(Object.keys(one!));
    // DISPLAYED_MACHINE_FIELDS (api/machines.py) lists ip_addresses; the recorded region's emitter left it out.
    expect([...ours].filter((k) => !real.has(k))).toEqual(['ip_addresses']);
    expect([...real].filter((k) => !ours.has(k))).toEqual([]);
    // 3.4 keeps error_description to itself; 3.5 shows it.
    expect(ours.has('error_description')).toBe(false);
  });

  it('3.5 adds error_description (DISPLAYED_MACHINE_FIELDS from 3.5.0)', async () => {
    const [one] = JSON.parse(await listMachinesRaw('3.5.0', 1)) as Record<string, unknown>[];
    expect(one).toHaveProperty('error_description', '');
  });

  it('each interface carries the recorded interface fields and a VLAN object', async () => {
    const [one] = JSON.parse(await listMachinesRaw('3.4.10', 1)) as { interface_set: Record<string, unknown>[] }[];
    const realIface = (recorded[0] as { interface_set: Record<string, unknown>[] }).interface_set[0]!;
    expect(Object.keys(one!.interface_set[0]!).sort()).toEqual(Object.keys(realIface).sort());
    expect(one!.interface_set[0]!.vlan).toMatchObject({ fabric: 'fabric-0', vid: 0 });
  });

  it('a list of 29 machines is as large as the recorded one, within 15 %', async () => {
    const body = await listMachinesRaw('3.4.10', recorded.length);
    const ratio = body.length / recordedList.body.length;
    expect(ratio).toBeGreaterThan(0.85);
    expect(ratio).toBeLessThan(1.15);
  });
});
