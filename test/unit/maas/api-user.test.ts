import { afterEach, describe, expect, it } from 'vitest';
import { randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../../lab/maas-sim/index.ts';
import { API_USER_TTL_MS, apiUserOf, requireAdmin } from '../../../src/adapters/maas/api-user.ts';
import { createMaasClient, type ClosableMaasClient } from '../../../src/adapters/maas/client.ts';
import { Secret } from '../../../src/core/secret.ts';

// Real parts: the MAAS simulator (users/?op=whoami) and the MAAS client over loopback.

let sim: MaasSimulator | undefined;
const clients: ClosableMaasClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await sim?.close();
});

async function region(admin: boolean): Promise<() => ClosableMaasClient> {
  const key = randomApiKey();
  sim = await startMaasSimulator({ scenario: scenario({ user: admin ? 'admin' : 'viewer', userIsAdmin: admin }), apiKeys: [key] });
  const url = sim.url;
  // A fresh client each time, as some adapters build them: the answer is kept per region and key.
  return () => {
    const c = createMaasClient({ name: 'region-a', url, apiKey: new Secret(key, 'test') }, { retries: 0 });
    clients.push(c);
    return c;
  };
}

const whoamis = () => (sim?.calls ?? []).filter((c) => c.op === 'whoami').length;

describe('apiUserOf: whoami once per region and key for a few minutes', () => {
  it('asks once within the TTL (concurrent callers share the answer), and asks again after it', async () => {
    const client = await region(true);
    let now = 1_000;
    const [a, b] = await Promise.all([apiUserOf(client(), () => now), apiUserOf(client(), () => now)]);
    expect([a.username, b.username]).toEqual(['admin', 'admin']);
    now += API_USER_TTL_MS - 1;
    await apiUserOf(client(), () => now);
    expect(whoamis()).toBe(1);
    (sim as MaasSimulator).state.userIsAdmin = false;
    now += 1;
    expect((await apiUserOf(client(), () => now)).is_superuser).toBe(false);
    expect(whoamis()).toBe(2);
  });

  it('a failed whoami is not kept: the next call asks again', async () => {
    const client = await region(true);
    sim?.injectFaults({ status: 503, count: 1 });
    await expect(apiUserOf(client())).rejects.toMatchObject({ status: 503 });
    expect((await apiUserOf(client())).username).toBe('admin');
    expect(whoamis()).toBe(2);
  });
});

describe('requireAdmin', () => {
  it('passes a superuser', async () => {
    const client = await region(true);
    expect((await requireAdmin(client(), 'region-a', 'fix-dns')).username).toBe('admin');
  });

  it('refuses anyone else naming the right, the MAAS call and what to configure, never a bare 403', async () => {
    const client = await region(false);
    const err = await requireAdmin(client(), 'region-a', 'fix-dns').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'GUARD_REFUSED' });
    const text = (err as { describe(): string }).describe();
    expect(text).toMatch(/^fix-dns needs a MAAS admin and the API key for MAAS region-a is viewer's, who is not one: nothing was sent or run\. MAAS lets only superusers do PUT dnsresources\/<id>\//);
    expect(text).toContain('Set maas.region-a.apiKey to the API key of a MAAS admin of that region');
    expect(text).not.toMatch(/\b403\b/);
    expect(sim?.calls.map((c) => c.op)).toEqual(['whoami']);
  });
});
