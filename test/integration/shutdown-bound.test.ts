import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startPrivateRedis } from '../../lab/private-redis.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { SHUTDOWN_BOUND_MS } from '../../src/main.ts';
import { waitUntil } from '../helpers/redis.ts';

/*
 * The 10 s bound of a stopping process (src/main.ts runRole), as an operator meets it: a worker
 * whose running job waits on a MAAS that accepted the connection and never answers (the client
 * gives it 3 × 10 s) cannot finish its active jobs; SIGTERM must still end it, non-zero, with one
 * JSON line saying the shutdown gave up. (A Redis frozen under SIGSTOP is no such peer: an idle
 * worker sometimes closes without it within the bound, sometimes not.)
 */

const BIN = fileURLToPath(new URL('../../bin/maas-chatops.js', import.meta.url));
const config = (maasPort: number) => `maas:
  region-a:
    url: http://127.0.0.1:${maasPort}/MAAS
    apiKey: env:MAAS_KEY
sites:
  site-b:
    maas: region-a
    rack: { resolver: 127.0.0.1, probe: direct }
`;

/** A MAAS that accepts connections, reads what it is sent and never answers. */
async function silentMaas(): Promise<{ server: Server; port: number; connections: Socket[] }> {
  const connections: Socket[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, connections };
}

describe.runIf(hasRedisServer())('shutdown bound', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'shutdown-bound-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a worker whose job waits on a silent MAAS exits 2 after SIGTERM with one JSON line saying the shutdown timed out', async () => {
    const redis = await startPrivateRedis();
    const maas = await silentMaas();
    writeFileSync(join(dir, 'maas-chatops.yaml'), config(maas.port));
    const child = spawn(process.execPath, [BIN, 'worker', '--config', join(dir, 'maas-chatops.yaml')], {
      env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', REDIS_URL: redis.url, MAAS_KEY: 'aaaaaaaaaaaa:bbbbbbbbbbbb:cccccccccccccccc' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const producer = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const queues = new JobQueues(producer, createRedactor([]));
    try {
      await waitUntil(() => stderr.includes('"msg":"maas-chatops started"'), 60_000, 100);
      await queues.enqueue('mac-diff', { target: 'site-b' });
      // The job is running: its first MAAS request is waiting on the silent MAAS.
      await waitUntil(() => maas.connections.length > 0, 30_000, 50);
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
      await queues.close().catch(() => undefined);
      producer.disconnect();
      for (const socket of maas.connections) socket.destroy();
      maas.server.close();
      await redis.stop();
    }
  }, SHUTDOWN_BOUND_MS + 90_000);
});
