import { afterEach, describe, expect, it } from 'vitest';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab, type SimVmHost } from '../../lab/vmhost-sim/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { Redis } from 'ioredis';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// The worker role as deployed: `sites.site-b.watch.vmHosts: true` starts the VM host watch, whose
// health /readyz's detail and /metrics show; closing the runtime ends its session.

const HOST = '127.0.35.1';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('worker role with a VM host watch', () => {
  it('shows the watch on /readyz and /metrics, and ends its SSH session on close', async () => {
    const lab: MacLab = await startMacLab({
      machines: [machine({ system_id: 'sb3001', hostname: 'site-b-node1', zone: 'site-b', macs: ['52:54:00:b3:00:01'], power: virshPower(HOST, 'site-b-node1') })],
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', running: false, nics: [{ mac: '52:54:00:b3:00:01' }] }] } }] }],
    });
    cleanups.push(() => lab.close());
    const raw = JSON.parse(lab.configText);
    raw.sites['site-b'].watch = { vmHosts: true };
    const loaded = parseConfigText(JSON.stringify(raw), { path: 'lab.yaml', env: lab.env });
    const prefix = freshPrefix('vmwatch-runtime');
    const runtime: Runtime = await startRuntime({ role: 'worker', loaded, env: { REDIS_URL: TEST_REDIS_URL, PORT: '0' }, prefix, host: '127.0.0.1', log: silentLogger(), adapters: lab.adapters });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await runtime.close();
      const redis = new Redis(TEST_REDIS_URL);
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });
    const host = lab.vmHosts.get(HOST) as SimVmHost;
    const url = `http://127.0.0.1:${runtime.port}`;
    await waitUntil(() => host.files.eventListeners() === 1);
    const ready = await (await fetch(`${url}/readyz`)).json();
    expect(ready.detail).toEqual({
      vmHostWatches: [{ site: 'site-b', vmHost: HOST, state: 'watching', healthy: true, sessions: 1, restarts: { dropped: 0, exited: 0, error: 0 }, events: 0 }],
    });
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('maas_chatops_vmhost_watches{state="watching"} 1');

    await runtime.close();
    closed = true;
    // The server sees the watch's connection end: nothing is left holding the host.
    await waitUntil(() => host.ssh.openConnections === 0);
    expect(host.ssh.authenticated).toBe(1);
  });
});
