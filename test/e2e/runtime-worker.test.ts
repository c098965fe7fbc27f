import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { freePort, startPrivateRedis, type RedisHandle } from '../../lab/private-redis.ts';
import { startSlackEmulator, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { Redis } from 'ioredis';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

const loaded = parseConfigText('{}', { path: 'empty.yaml', env: {} });

describe('worker role: probes follow Redis', () => {
  let runtime: Runtime | undefined;
  let redis: RedisHandle | undefined;
  afterEach(async () => {
    await runtime?.close();
    await redis?.stop();
  });

  it('starts without Redis, says not ready, and becomes ready when Redis comes up on its port', async () => {
    const port = await freePort();
    runtime = await startRuntime({ role: 'worker', loaded, env: { REDIS_URL: `redis://127.0.0.1:${port}`, PORT: '0' }, host: '127.0.0.1', log: silentLogger() });
    const url = `http://127.0.0.1:${runtime.port}`;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const notReady = await fetch(`${url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ failed: ['redis'] });
    redis = await startPrivateRedis(port);
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 15_000, 200);
  });
});

describe('where it listens: HOST and METRICS_PORT', () => {
  let runtime: Runtime | undefined;
  let emulator: SlackEmulator | undefined;
  // Its own key prefix on the shared Redis, removed after each test (not the default prefix a real bot uses).
  let prefix = freshPrefix('listen');
  afterEach(async () => {
    await runtime?.close();
    await emulator?.close();
    runtime = undefined;
    emulator = undefined;
    const admin = new Redis(TEST_REDIS_URL);
    await deletePrefix(admin, prefix);
    admin.disconnect();
    prefix = freshPrefix('listen');
  });

  const reaches = (url: string) => fetch(url).then((r) => r.status, () => 'refused' as const);

  it('HOST binds the worker to that address only', async () => {
    runtime = await startRuntime({ role: 'worker', loaded, env: { REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: '127.0.0.2' }, prefix, log: silentLogger() });
    expect(await reaches(`http://127.0.0.2:${runtime.port}/healthz`)).toBe(200);
    expect(await reaches(`http://127.0.0.1:${runtime.port}/healthz`)).toBe('refused');
  });

  it('METRICS_PORT moves /metrics off the Slack-facing listener of the bot; probes stay on PORT', async () => {
    emulator = await startSlackEmulator({ channels: ['C0OPS'] });
    runtime = await startRuntime({
      role: 'bot',
      loaded,
      env: { SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', REDIS_URL: TEST_REDIS_URL },
      prefix,
      log: silentLogger(),
    });
    expect(runtime.metricsPort).toBeGreaterThan(0);
    expect(runtime.metricsPort).not.toBe(runtime.port);
    const slackFacing = `http://127.0.0.1:${runtime.port}`;
    expect(await reaches(`${slackFacing}/metrics`)).toBe(404);
    expect(await reaches(`${slackFacing}/healthz`)).toBe(200);
    const metrics = await fetch(`http://127.0.0.1:${runtime.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP maas_chatops_/m);
    expect(await reaches(`http://127.0.0.1:${runtime.metricsPort}/readyz`)).toBe(404);
  });

  it('a bad HOST or METRICS_PORT stops the start with a clear message', async () => {
    await expect(startRuntime({ role: 'worker', loaded, env: { REDIS_URL: TEST_REDIS_URL, PORT: '0', HOST: 'not a host' }, prefix, log: silentLogger() })).rejects.toThrow(/HOST is "not a host"/);
    await expect(startRuntime({ role: 'worker', loaded, env: { REDIS_URL: TEST_REDIS_URL, PORT: '3000', METRICS_PORT: '3000' }, prefix, log: silentLogger() })).rejects.toThrow(/METRICS_PORT is the same as PORT/);
  });
});
