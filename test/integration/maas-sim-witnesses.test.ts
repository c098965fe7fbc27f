import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { discovery, machine, nodeEvent, rackController, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { createMaasClient, type ClosableMaasClient } from '../../src/adapters/maas/client.ts';
import { MaasApiError } from '../../src/adapters/maas/maas-api-error.ts';

/*
 * Network discovery and the event log as the simulator serves them, read through our client
 * over HTTP + OAuth: the rules of maasserver/api/discoveries.py and maasserver/api/events.py.
 */

let sim: MaasSimulator | undefined;
let client: ClosableMaasClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  sim = undefined;
  client = undefined;
});

const rack = { system_id: 'rack01', hostname: 'rack-b' };
const node = (n: number) => ({ system_id: `m${n}`, hostname: `node${n}` });

async function start(extra: Parameters<typeof scenario>[0] = {}): Promise<ClosableMaasClient> {
  const key = randomApiKey();
  sim = await startMaasSimulator({
    scenario: scenario({
      machines: [1, 2, 3].map((n) => machine({ ...node(n), macs: [`52:54:00:00:00:0${n}`] })),
      rackControllers: [rackController({ ...rack, macs: ['52:54:00:aa:00:01'] })],
      ...extra,
    }),
    apiKeys: [key],
  });
  const config: Config = parseConfigText(JSON.stringify({ maas: { r: { url: sim.url, apiKey: 'env:K' } }, sites: {} }), { path: 't.yaml', env: { K: key } }).config;
  client = createMaasClient(config.maas.r!);
  return client;
}

describe('MAAS simulator: discovery/', () => {
  it('by_unknown_mac drops MACs any machine or rack interface has, newest sighting first, with the observer', async () => {
    const c = await start({
      discoveries: [
        discovery({ mac: '52:54:00:7F:00:01', ip: '10.20.0.57', rack, rackInterface: 'br-pxe', lastSeen: '2026-07-24T12:00:00.000Z' }),
        discovery({ mac: '52:54:00:00:00:02', ip: '10.20.0.12', rack, rackInterface: 'br-pxe', lastSeen: '2026-07-24T12:30:00.000Z' }),
        discovery({ mac: '52:54:00:aa:00:01', rack, rackInterface: 'eth0', lastSeen: '2026-07-24T12:40:00.000Z' }),
        discovery({ mac: '52:54:00:7f:00:09', rack, rackInterface: 'br-pxe', lastSeen: '2026-07-24T12:50:00.000Z' }),
      ],
    });
    const unknown = await c.unknownMacDiscoveries();
    expect(unknown.map((d) => d.mac_address)).toEqual(['52:54:00:7f:00:09', '52:54:00:7f:00:01']);
    expect(unknown[1]).toMatchObject({ ip: '10.20.0.57', observer: { system_id: 'rack01', hostname: 'rack-b', interface_name: 'br-pxe' }, last_seen: '2026-07-24T12:00:00.000Z' });
    expect(Buffer.from(unknown[1]!.discovery_id, 'base64').toString()).toBe('10.20.0.57,52:54:00:7f:00:01');
    expect(sim!.calls.map((x) => `${x.method} ${x.path} ${x.op}`)).toEqual(['GET /MAAS/api/2.0/discovery/ by_unknown_mac']);
  });

  it('discovery disabled: an empty list, not an error', async () => {
    const c = await start();
    expect(await c.unknownMacDiscoveries()).toEqual([]);
  });
});

describe('MAAS simulator: events/?op=query', () => {
  const events = [
    nodeEvent({ id: 1, node: node(1), type: 'PXE Request', created: '2026-07-21T09:12:30Z', description: 'commissioning' }),
    nodeEvent({ id: 2, node: node(1), type: 'Performing PXE boot', created: '2026-07-21T09:12:31Z' }),
    nodeEvent({ id: 3, node: node(2), type: 'Commissioning', created: '2026-07-22T10:00:00Z' }),
    nodeEvent({ id: 4, node: node(3), type: 'Performing PXE boot', created: '2026-07-23T10:00:00Z' }),
    nodeEvent({ id: 5, node: node(1), type: 'Failed commissioning', created: '2026-07-24T10:00:00Z' }),
  ];

  it('filters by system id (repeated), hides DEBUG at the default INFO level, newest first, MAAS time format', async () => {
    const c = await start({ events });
    const page = await c.queryEvents({ ids: ['m1', 'm2'], limit: 100 });
    expect(page.events.map((e) => e.id)).toEqual([5, 3, 2]);
    expect(page.events[2]).toEqual({ username: null, node: 'm1', hostname: 'node1', id: 2, level: 'INFO', created: 'Tue, 21 Jul. 2026 09:12:31', type: 'Performing PXE boot', description: '' });
    expect(page.count).toBe(3);
    expect(page.prev_uri).toBe('/MAAS/api/2.0/events/?op=query&id=m1&id=m2&limit=100&before=2');
    expect(page.next_uri).toBe('/MAAS/api/2.0/events/?op=query&id=m1&id=m2&limit=100&after=5');
    const debug = await c.queryEvents({ ids: ['m1'], limit: 100, level: 'DEBUG' });
    expect(debug.events.map((e) => e.id)).toEqual([5, 2, 1]);
  });

  it('limit bounds one page (newest), prev_uri points at older ones; an empty answer has no prev_uri', async () => {
    const c = await start({ events });
    const page = await c.queryEvents({ ids: ['m1', 'm2', 'm3'], limit: 2 });
    expect(page.events.map((e) => e.id)).toEqual([5, 4]);
    expect(page.prev_uri).toContain('before=4');
    const none = await c.queryEvents({ ids: ['nobody'], limit: 2 });
    expect(none).toEqual({ count: 0, events: [], next_uri: '/MAAS/api/2.0/events/?op=query&id=nobody&limit=2', prev_uri: null });
  });

  it('over 1000 is refused with MAAS\'s text; an unknown level too', async () => {
    const c = await start({ events });
    await expect(c.queryEvents({ ids: ['m1'], limit: 1001 })).rejects.toSatisfy((e: unknown) => e instanceof MaasApiError && e.status === 400 && /greater than limit: 1000/.test(e.body));
    await expect(c.queryEvents({ ids: ['m1'], limit: 5, level: 'LOUD' })).rejects.toSatisfy((e: unknown) => e instanceof MaasApiError && /Unrecognised log level: LOUD/.test(e.body));
  });
});
