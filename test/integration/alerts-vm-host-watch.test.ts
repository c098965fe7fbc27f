import { afterEach, describe, expect, it } from 'vitest';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startSlackEmulator } from '../../lab/slack-emulator/index.ts';
import { startMacLab, type SimVmHost, type VmDomain } from '../../lab/vmhost-sim/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { startAlerting } from '../../src/edge/alerts/start-alerting.ts';
import { startVmHostWatchScans } from '../../src/edge/alerts/vm-host-watch-scans.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { Registry } from 'prom-client';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// The regenerated-MACs incident as it happens: an OpenTofu replace undefines a VM and defines it again with a
// new NIC MAC. No scan is scheduled: only the watch can notice. Real parts end to end: the watch's
// virsh event session over pinned SSH to the lab's ssh2 VM host, the scan job on Redis running the
// real mac-diff against the MAAS simulator and the same host, and the alert through the paced
// sender to the Slack emulator.

const ALERTS = 'C0ALERTS';
const HOST = '127.0.33.1';
const log = silentLogger();
const recorded = (n: number) => `52:54:00:b0:01:0${n}`;
const domains: VmDomain[] = [1, 2, 3, 4].map((n) => ({ name: `site-b-node${n}`, running: false, nics: [{ mac: recorded(n) }] }));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a VM redefined with a new MAC, seen by the VM host watch alone', () => {
  it('alerts in Slack without any scheduled scan: one alert, from one watch session and one mac-diff session', async () => {
    const lab = await startMacLab({
      machines: [1, 2, 3, 4].map((n) => machine({ system_id: `sb100${n}`, hostname: `site-b-node${n}`, zone: 'site-b', macs: [recorded(n)], power: virshPower(HOST, `site-b-node${n}`) })),
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
    });
    cleanups.push(() => lab.close());
    const slack = await startSlackEmulator();
    cleanups.push(() => slack.close());
    const raw = { ...JSON.parse(lab.configText), slack: { alertChannel: ALERTS } };
    raw.sites['site-b'].watch = { vmHosts: true };
    const { config, secrets } = parseConfigText(JSON.stringify(raw), { path: 'lab.yaml', env: lab.env });
    expect(config.schedules).toEqual({});
    const redact = createRedactor(secrets);
    const prefix = freshPrefix('vmwatch-alert');
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    const producer = createRedis(TEST_REDIS_URL, 'producer');
    const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5 });
    const alerting = await startAlerting({ connection: redis, prefix, config, adapters: lab.adapters, sender, log, redact });
    const queues = new JobQueues(producer, redact, prefix);
    const watches = startVmHostWatchScans({ config, adapters: lab.adapters, enqueue: (n, d, o) => queues.enqueue(n, d, o), registry: new Registry(), log });
    cleanups.push(async () => {
      await watches?.close();
      await alerting.close();
      await sender.close(1000);
      await queues.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      producer.disconnect();
    });
    const host = lab.vmHosts.get(HOST) as SimVmHost;
    await waitUntil(() => host.files.eventListeners() === 1);
    expect(host.ssh.authenticated).toBe(1);

    host.redefine('site-b-node3', [{ mac: '52:54:00:e7:01:03' }]);
    const alert = await slack.waitFor((s) => s.channelMessages(ALERTS).find((m) => !m.threadTs), { timeoutMs: 15_000, description: 'the drift alert' });
    expect(alert.text).toMatch(/^CRITICAL: 1 of 4 machines at site-b has drifted MACs: MAAS will see it as unknown at PXE/);
    // The watch's session stayed open; the mac-diff opened one of its own.
    expect(host.ssh.authenticated).toBe(2);
    expect(host.files.eventListeners()).toBe(1);
    expect(slack.channelMessages(ALERTS).filter((m) => !m.threadTs)).toHaveLength(1);
  });
});
