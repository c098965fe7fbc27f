import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config.ts';
import { silentLogger } from '../../src/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { freePort, startPrivateRedis, type RedisHandle } from '../../src/lab/private-redis.ts';
import { waitUntil } from '../helpers/redis.ts';

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
