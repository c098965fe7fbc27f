import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startPrivateRedis } from '../../lab/private-redis.ts';
import { SHUTDOWN_BOUND_MS } from '../../src/main.ts';
import { waitUntil } from '../helpers/redis.ts';

/*
 * The 10 s bound of a stopping process (src/main.ts runRole), as an operator meets it: a worker
 * whose Redis still accepts connections and reads but never answers (a private redis-server
 * stopped with SIGSTOP once the worker is up) cannot close its queues; SIGTERM must still end it,
 * non-zero, with one JSON line saying the shutdown gave up.
 */

const BIN = fileURLToPath(new URL('../../bin/maas-chatops.js', import.meta.url));
const CONFIG = `maas:
  region-a:
    url: http://127.0.0.1:9/MAAS
    apiKey: env:MAAS_KEY
sites:
  site-b:
    maas: region-a
    rack: { resolver: 127.0.0.1, probe: direct }
`;

describe.runIf(hasRedisServer())('shutdown bound', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'shutdown-bound-'));
    writeFileSync(join(dir, 'maas-chatops.yaml'), CONFIG);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a worker whose Redis never answers exits 2 after SIGTERM with one JSON line saying the shutdown timed out', async () => {
    const redis = await startPrivateRedis();
    const child = spawn(process.execPath, [BIN, 'worker', '--config', join(dir, 'maas-chatops.yaml')], {
      env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', REDIS_URL: redis.url, MAAS_KEY: 'aaaaaaaaaaaa:bbbbbbbbbbbb:cccccccccccccccc' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      await waitUntil(() => stderr.includes('"msg":"maas-chatops started"'), 60_000, 100);
      redis.child?.kill('SIGSTOP');
      child.kill('SIGTERM');
      // A hung shutdown would never exit: the test's own timeout (bound + margin) catches it.
      const [code, signal] = await exited;
      expect({ code, signal }).toEqual({ code: 2, signal: null });
      const lines = stderr.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string; cause?: string; boundMs?: number });
      const timedOut = lines.filter((l) => l.cause === 'timeout');
      expect(timedOut).toEqual([expect.objectContaining({ level: 50, boundMs: SHUTDOWN_BOUND_MS, msg: `shutdown did not finish within ${SHUTDOWN_BOUND_MS / 1000} s; exiting anyway` })]);
      expect(lines.map((l) => l.msg)).not.toContain('stopped');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      redis.child?.kill('SIGCONT');
      await redis.stop();
    }
  }, SHUTDOWN_BOUND_MS + 90_000);
});
