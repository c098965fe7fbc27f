import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_CHANNELS } from '../../lab/lab-world.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/*
 * The queue dashboard (Bull Board) as the bot serves it in either Slack mode: in HTTP mode on
 * Bolt's listener, in Socket Mode on the bot's own. Its page, API and static files sit below one
 * path, so both listeners must route the whole subtree, behind the credentials, and GET only.
 */

const USER = 'oncall';
const PASSWORD = 'correct horse battery staple';
const GOOD = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

describe.each(['http', 'socket'] as const)('queue dashboard on the bot in %s mode', (mode) => {
  let emulator: SlackEmulator;
  let runtime: Runtime | undefined;
  let base: string;
  const prefix = freshPrefix(`dash-${mode}`);

  beforeAll(async () => {
    emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops] });
    const loaded = parseConfigText(`slack: { commandChannels: [${LAB_CHANNELS.ops}] }\n`, { path: 'dashboard.yaml', env: {} });
    const env = {
      SLACK_BOT_TOKEN: emulator.botToken,
      SLACK_API_URL: emulator.apiUrl,
      SLACK_MODE: mode,
      ...(mode === 'http' ? { SLACK_SIGNING_SECRET: emulator.signingSecret } : { SLACK_APP_TOKEN: emulator.appToken }),
      PORT: '0',
      REDIS_URL: TEST_REDIS_URL,
      DASHBOARD_USER: USER,
      DASHBOARD_PASSWORD: PASSWORD,
    };
    runtime = await startRuntime({ role: 'bot', loaded, env, prefix, host: '127.0.0.1', log: silentLogger() });
    base = `http://127.0.0.1:${runtime.port}`;
    await runtime.queues.enqueue('dns-check', { target: 'prod', requestedBy: 'U0OPS1' });
  });

  afterAll(async () => {
    await runtime?.close();
    await emulator?.close();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('serves the page, a client-side route, the API and a static file, with the credentials only', async () => {
    for (const path of ['/admin/queues', '/admin/queues/queue/maas-dns-check', '/admin/queues/api/queues', '/admin/queues/static/images/logo.svg']) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(401);
      expect((await fetch(`${base}${path}`, { headers: GOOD })).status, path).toBe(200);
    }
    const { queues } = (await (await fetch(`${base}/admin/queues/api/queues?activeQueue=maas-dns-check&status=waiting`, { headers: GOOD })).json()) as {
      queues: { name: string; readOnlyMode: boolean; counts: Record<string, number> }[];
    };
    const dns = queues.find((q) => q.name === 'maas-dns-check');
    expect(dns).toMatchObject({ readOnlyMode: true, counts: expect.objectContaining({ waiting: 1 }) });
  });

  it('takes no action: a PUT to pause the queue changes nothing', async () => {
    const res = await fetch(`${base}/admin/queues/api/queues/maas-dns-check/pause`, { method: 'PUT', headers: GOOD });
    expect(res.status).not.toBe(200);
    expect(await runtime!.queues.queue('dns-check').isPaused()).toBe(false);
  });

  it('still answers /healthz and /readyz (Slack connected) on the same port', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { slack: true, redis: true } });
  });
});
