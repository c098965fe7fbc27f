import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/core/config.ts';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { macLabScenario } from '../../lab/vmhost-sim/index.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { aliasSites, numbered, writeLabConfigVariant, type WrittenConfig } from '../../bench/lib/lab-config.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

const SLOW_SITES = numbered('slow', 8);
/** Far longer than a dns-check's whole run against the fast region, so the order below is not a race. */
const SLOW_MAAS_LATENCY_MS = 800;

/**
 * Fairness by queue: each job kind has its own BullMQ queue and its own worker slots
 * (src/engine/queue/queue-names.ts, job-workers.ts). Eight mac-diffs of sites behind a slow MAAS
 * region fill the mac-diff slots and queue behind them; a dns-check asked for afterwards runs
 * in the dns-check slots at once. Asserted on the order of the posted results, not on time.
 */
describe('fairness: a slow mac-diff backlog does not hold up a dns-check', () => {
  let world: LabWorld;
  let slowMaas: MaasSimulator;
  let emulator: SlackEmulator;
  let config: WrittenConfig;
  let runtime: Runtime;
  const prefix = freshPrefix('fair');

  beforeAll(async () => {
    world = await startLabWorld();
    slowMaas = await startMaasSimulator({ scenario: scenario({ machines: macLabScenario().maasMachines }), apiKeys: [world.env.LAB_MAAS_KEY as string], latencyMs: SLOW_MAAS_LATENCY_MS });
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
    config = writeLabConfigVariant(world, (doc) => {
      doc.maas['region-slow'] = { url: slowMaas.url, apiKey: 'env:LAB_MAAS_KEY' };
      aliasSites(doc, 'site-b', SLOW_SITES, { maas: 'region-slow' });
    });
    runtime = await startRuntime({
      role: 'serve',
      loaded: loadConfig({ path: config.path, env: world.env }),
      env: { ...world.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', REDIS_URL: TEST_REDIS_URL },
      prefix,
      host: '127.0.0.1',
      log: silentLogger(),
    });
  });

  afterAll(async () => {
    await runtime?.close();
    await emulator?.close();
    await slowMaas?.close();
    await world?.close();
    config?.remove();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('a dns-check asked for after 8 slow mac-diffs is posted before the last of them', async () => {
    const appUrl = `http://127.0.0.1:${runtime.port}`;
    const send = async (text: string) => {
      const sent = await emulator.sendSlashCommand({ appUrl, text, user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
      expect(sent.status).toBe(200);
      // The ack is posted after the job is queued: waiting for it orders the enqueues.
      await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { timeoutMs: 10_000, description: `the ack of ${text}` });
    };
    await Promise.all(SLOW_SITES.map((site) => send(`mac-diff ${site}`)));
    await send('dns-check prod');

    const results = await emulator.waitFor(
      (e) => {
        // Each result replaces its command's answer; in the order the results arrived.
        const posted = e.resultsIn(LAB_CHANNELS.ops);
        return posted.length >= 9 ? posted : undefined;
      },
      { timeoutMs: 30_000, description: 'nine results' },
    );
    const order = results.map((m) => (m.text.startsWith('CRITICAL: API record WIPED') ? 'dns-check' : /machines at slow-\d/.test(m.text) ? 'mac-diff' : m.text));
    expect(order.filter((k) => k === 'mac-diff')).toHaveLength(8);
    const dnsAt = order.indexOf('dns-check');
    expect(dnsAt).toBeGreaterThanOrEqual(0);
    expect(dnsAt).toBeLessThan(order.lastIndexOf('mac-diff'));
    // Stronger: it did not even wait for the first round of mac-diffs (4 slots per kind).
    expect(dnsAt).toBeLessThan(4);
    // Each mac-diff went to the slow region (two requests each, two for the drift's witnesses and, as no rack saw an unknown MAC,
    // one count of discovery/; after one whoami for the region), the dns-check to the fast one.
    expect(slowMaas.calls.filter((c) => c.op !== 'whoami')).toHaveLength(40);
    expect(slowMaas.calls.filter((c) => c.path.endsWith('/discovery/') && !c.op)).toHaveLength(8);
    expect(slowMaas.calls.filter((c) => c.op === 'whoami').length).toBeLessThanOrEqual(1);
  });
});
