import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import { Secret } from '../../src/core/secret.ts';
import { macStepRunner } from '../../src/features/macs/repair-steps.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';

/*
 * mark_broken is not idempotent: an error of it is resolved by reading the machine, never by
 * resending it or by believing the error (MAAS 3.4.10 answered 500 to a mark_broken it applied).
 */

let sim: MaasSimulator;
let maas: ClosableMaasClient;

beforeEach(async () => {
  const key = randomApiKey();
  sim = await startMaasSimulator({
    scenario: scenario({ machines: [machine({ system_id: 'fc0001', hostname: 'east-e02', status: 'Failed commissioning', owner: 'admin', macs: ['52:54:00:00:00:01'] })] }),
    apiKeys: [key],
  });
  maas = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(key, 'test') }, { backoffMs: 1, timeoutMs: 2_000 });
});

afterEach(async () => {
  await maas.close();
  await sim.close();
});

const step = {
  subject: 'east-e02',
  action: 'mark-broken' as const,
  detail: 'mark broken',
  params: { systemId: 'fc0001', hostname: 'east-e02', status: 'Failed commissioning', owner: 'admin' },
};
const context = { planId: 'p-lost', resumed: false, write: (<T,>(_name: string, send: () => Promise<T>) => send()) };

describe('fix-macs mark_broken whose answer is lost', () => {
  it('MAAS applied it but the answer never came: read back Broken, verified, sent once', async () => {
    sim.injectFaults({ dropAfterCommit: true, count: 1, path: /op=mark_broken/ });
    const result = await macStepRunner(maas).run(step, context);
    expect(result.outcome).toBe('verified');
    expect(result.detail).toMatch(/Failed commissioning → Broken \(read back; MAAS answered: /);
    expect(sim.calls.filter((c) => c.op === 'mark_broken')).toHaveLength(1);
  });

  it('MAAS refused with a 5xx and changed nothing: failed, with what the machine reads, sent once', async () => {
    sim.injectFaults({ status: 503, count: 1, path: /op=mark_broken/ });
    const result = await macStepRunner(maas).run(step, context);
    expect(result.outcome).toBe('failed');
    expect(result.detail).toMatch(/the machine reads Failed commissioning, not Broken: nothing changed/);
    expect(sim.calls.filter((c) => c.op === 'mark_broken')).toHaveLength(1);
  });
});
