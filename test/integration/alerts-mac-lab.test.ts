import { afterEach, describe, expect, it } from 'vitest';
import { startAlerting } from '../../src/edge/alerts/start-alerting.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { startMacLab, type MacLab, type VmDomain } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createSlackGateway } from '../../src/edge/slack/gateway.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

// Real parts end to end: BullMQ schedulers on Redis fire the scan job, which runs the real
// mac-diff job against the MAAS simulator (HTTP + OAuth) and an ssh2 VM host whose virsh answers
// from its state; alerts go through the paced sender's WebClient to the Slack emulator. The test
// changes the VM host's live MACs between scans, as an in-place OpenTofu apply would.

const ALERTS = 'C0ALERTS';
const HOST = '127.0.31.1';
const log = silentLogger();
const recorded = (n: number) => `52:54:00:b0:00:${n.toString(16).padStart(2, '0')}`;
const regenerated = (n: number) => `52:54:00:e7:00:${n.toString(16).padStart(2, '0')}`;

function domains(drifted: readonly number[]): VmDomain[] {
  return [1, 2, 3, 4].map((n) => ({ name: `site-b-node${n}`, nics: [{ mac: drifted.includes(n) ? regenerated(n) : recorded(n) }] }));
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('drift alerts from the real mac-diff on scheduled scans', () => {
  it('alerts once when MACs drift, threads the next one, and resolves after the fix', async () => {
    const lab: MacLab = await startMacLab({
      machines: [1, 2, 3, 4].map((n) => machine({ system_id: `sb000${n}`, hostname: `site-b-node${n}`, zone: 'site-b', macs: [recorded(n)], power: virshPower(HOST, `site-b-node${n}`) })),
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: domains([]) } }] }],
    });
    cleanups.push(() => lab.close());
    const slack: SlackEmulator = await startSlackEmulator();
    cleanups.push(() => slack.close());
    const withAlerts = { ...JSON.parse(lab.configText), slack: { alertChannel: ALERTS }, schedules: { macs: '400ms' } };
    const { config, secrets } = parseConfigText(JSON.stringify(withAlerts), { path: 'lab.yaml', env: lab.env });
    const redact = createRedactor(secrets);
    const prefix = freshPrefix('maclab');
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    const sender = createSlackGateway({ token: slack.botToken, slackApiUrl: slack.apiUrl, redact, log, intervalMs: 5 });
    const alerting = await startAlerting({ connection: redis, prefix, config, adapters: lab.adapters, sender, log, redact });
    cleanups.push(async () => {
      await alerting.close();
      await sender.close(1000);
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });
    const host = lab.vmHosts.get(HOST)!;
    const scansSeen = () => lab.maas.calls.filter((c) => c.path.includes('machines')).length;

    // Healthy: scans run, nothing is posted.
    await waitFor(() => scansSeen() >= 4);
    expect(slack.channelMessages(ALERTS)).toEqual([]);

    host.setState({ domains: domains([1, 2]) });
    // A scan may catch the change half-way (the state file is replaced between two scans); the next one completes it.
    const alert = await slack.waitFor((s) => s.channelMessages(ALERTS)[0], { timeoutMs: 10_000, description: 'the drift alert' });
    await slack.waitFor(() => alert.text.startsWith('CRITICAL: 2 of 4 machines at site-b have drifted MACs'), { timeoutMs: 10_000, description: 'both drifted machines' });
    // Each drifted machine is in the alert's thread: its evidence, or the note that it is new.
    await slack.waitFor((s) => JSON.stringify(s.channelMessages(ALERTS).filter((m) => m.threadTs === alert.ts).map((m) => [m.text, m.blocks])).includes('site-b-node2'), { timeoutMs: 10_000, description: 'node2 in the thread' });
    host.setState({ domains: domains([1, 2, 3]) });
    const note = await slack.waitFor((s) => s.channelMessages(ALERTS).find((m) => m.threadTs === alert.ts && m.text.includes('site-b-node3')), {
      timeoutMs: 10_000,
      description: 'the thread note about node3',
    });
    expect(note.text).toContain('1 new: `MAC_DRIFT` site-b-node3');
    expect(alert.text).toMatch(/^CRITICAL: 3 of 4 machines/);
    expect(slack.channelMessages(ALERTS).filter((m) => !m.threadTs)).toHaveLength(1);

    host.setState({ domains: domains([]) });
    await slack.waitFor((s) => s.channelMessages(ALERTS)[0]?.text.startsWith('RESOLVED after'), { timeoutMs: 10_000, description: 'the resolve' });
    expect(slack.channelMessages(ALERTS).filter((m) => !m.threadTs)).toHaveLength(1);
    expect(JSON.stringify(slack.calls)).not.toContain(lab.env.MAC_LAB_MAAS_KEY!.split(':')[2]!);
  });
});

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
