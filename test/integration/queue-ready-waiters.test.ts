import { afterEach, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { freePort } from '../../lab/private-redis.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';

// A burst of commands while Redis does not answer (a failover, a restart): every request waits for
// the connection's next 'ready'. They share one listener; one each was 11 and more listeners on the
// connection and Node's MaxListenersExceededWarning in the failover test.

let connection: Redis | undefined;
afterEach(() => connection?.disconnect());

it('twenty requests waiting for Redis put one ready listener on the connection, and each is refused once', async () => {
  const port = await freePort();
  connection = createRedis(`redis://127.0.0.1:${port}`, 'producer');
  connection.on('error', () => undefined);
  const queues = new JobQueues(connection, createRedactor([]), 'mct-ready-waiters', 500, { recoveryMs: 1_500 });
  queues.queue('dns-check');
  const before = connection.listenerCount('ready');
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const answers = Array.from({ length: 20 }, () => queues.enqueue('dns-check', { target: 'prod' }).then(() => 'queued', (err: Error) => err.message));
    await new Promise((r) => setTimeout(r, 200));
    expect(connection.listenerCount('ready') - before).toBe(1);
    expect(await Promise.all(answers)).toEqual(Array(20).fill('the job queue (Redis) is unavailable'));
  } finally {
    process.off('warning', onWarning);
    await queues.close();
  }
  expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
});
