import { afterEach, describe, expect, it } from 'vitest';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import { followCommissioning, type CommissioningProgress } from '../../src/engine/repair/follow-commissioning.ts';
import { Secret } from '../../src/core/secret.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, type MaasSimulator, type MaasSimulatorOptions } from '../../lab/maas-sim/index.ts';

let sim: MaasSimulator | undefined;
let maas: ClosableMaasClient | undefined;
/** One fake clock for MAAS and the follower: sleeping advances it, so 40 minutes pass at once. */
let clock = 0;
const now = () => clock;
const sleep = async (ms: number) => {
  clock += ms;
};

afterEach(async () => {
  await maas?.close();
  await sim?.close();
});

const RECORDED = '52:54:00:00:00:01';

async function start(liveBootMac: string, options: Partial<MaasSimulatorOptions> = {}): Promise<void> {
  const key = randomApiKey();
  clock = 0;
  sim = await startMaasSimulator({
    scenario: scenario({ machines: [machine({ system_id: 'sb0001', hostname: 'site-b-node1', status: 'Broken', macs: [RECORDED], live_boot_mac: liveBootMac })] }),
    apiKeys: [key],
    clock: now,
    ...options,
  });
  maas = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(key, 'test') }, { retries: 0 });
}

const machineReads = () => (sim?.calls ?? []).filter((c) => c.method === 'GET' && c.path.endsWith('/machines/sb0001/')).length;

describe('followCommissioning against the MAAS simulator', () => {
  it('follows a commissioning that MAAS completes to Ready, with progress, reading only', async () => {
    await start(RECORDED, { timing: { commissioningMs: 4 * 60_000 } });
    await maas?.commission('sb0001');
    sim?.resetCalls();
    const progress: CommissioningProgress[] = [];
    const result = await followCommissioning(maas as ClosableMaasClient, 'sb0001', { pollMs: 60_000, now, sleep, onProgress: (p) => void progress.push(p) });
    expect(result).toMatchObject({ outcome: 'ready', polls: 5, elapsedMs: 4 * 60_000, machine: { status_name: 'Ready', owner: null } });
    expect(progress.map((p) => p.text)).toEqual(['site-b-node1: Commissioning (just started)']);
    expect(machineReads()).toBe(5);
    expect(sim?.calls.every((c) => c.method === 'GET')).toBe(true);
  });

  it('reports MAAS\'s own message when commissioning fails again (the machine PXE-boots with a MAC MAAS does not know)', async () => {
    await start('52:54:00:bb:00:01');
    await maas?.commission('sb0001');
    const result = await followCommissioning(maas as ClosableMaasClient, 'sb0001', { now, sleep });
    expect(result.outcome).toBe('failed');
    expect(result).toMatchObject({ message: "Failed commissioning: Node operation 'Commissioning' timed out after 30 minutes." });
    expect(result.elapsedMs).toBe(30 * 60_000);
  });

  it('gives up at its own bound when MAAS never ends it (a hang), and says the machine is still commissioning', async () => {
    await start('52:54:00:bb:00:01', { timing: { statusMonitor: false } });
    await maas?.commission('sb0001');
    sim?.resetCalls();
    const progress: CommissioningProgress[] = [];
    const result = await followCommissioning(maas as ClosableMaasClient, 'sb0001', { now, sleep, onProgress: (p) => void progress.push(p) });
    expect(result).toMatchObject({ outcome: 'timeout', elapsedMs: 40 * 60_000, machine: { status_name: 'Commissioning' } });
    // Every 15 s for 40 minutes, and the last read at the bound.
    expect(machineReads()).toBe(161);
    // A line when it starts, then one every 5 minutes: never one per poll.
    expect(progress.length).toBe(9);
  });
});
