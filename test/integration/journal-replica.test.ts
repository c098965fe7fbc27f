import { createServer, connect as tcpConnect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type RedisHandle } from '../../lab/private-redis.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { Secret } from '../../src/core/secret.ts';
import { createPlanStore } from '../../src/engine/repair/plan-store.ts';
import { stepWriter, UnreplicatedMarkError } from '../../src/engine/repair/write-guard.ts';
import { freshPrefix, waitUntil } from '../helpers/redis.ts';

/*
 * Issue 27: a repair write's `sending` mark must be on a replica before the write goes out, or a
 * Sentinel failover at the wrong moment loses it and a later run sends the write again. A real
 * primary and replica (redis-server on free loopback ports), the real plan store's journal and
 * write guard, and a real MAAS write (mark_broken, which is not idempotent) to the simulator.
 */

const simKey = randomApiKey();
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups = [];
});

function connect(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  cleanups.push(async () => client.disconnect());
  return client;
}

async function redisServer(): Promise<RedisHandle> {
  const handle = await startPrivateRedis();
  cleanups.push(() => handle.stop());
  return handle;
}

/**
 * The replication link, through a loopback TCP relay: `hold()` keeps what the primary sends from
 * the replica (a slow or congested link), `release()` delivers it, `cut()` drops it with the link.
 */
interface ReplicationLink {
  port: number;
  hold(): void;
  release(): void;
  cut(): void;
}

async function replicationLink(primaryPort: number): Promise<ReplicationLink> {
  let holding = false;
  const held: [Socket, Buffer][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((fromReplica) => {
    const toPrimary = tcpConnect(primaryPort, '127.0.0.1');
    for (const s of [fromReplica, toPrimary]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => (fromReplica.destroy(), toPrimary.destroy()));
    }
    fromReplica.on('data', (chunk: Buffer) => toPrimary.write(chunk));
    toPrimary.on('data', (chunk: Buffer) => (holding ? held.push([fromReplica, chunk]) : fromReplica.write(chunk)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    held.length = 0;
    for (const s of sockets) s.destroy();
    server.close();
  };
  cleanups.push(async () => cut());
  return {
    port: (server.address() as { port: number }).port,
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const [socket, chunk] of held.splice(0)) socket.write(chunk);
    },
    cut,
  };
}

async function primaryWithReplica(): Promise<{ primary: RedisHandle; link: ReplicationLink; primaryClient: Redis; replicaClient: Redis }> {
  const [primary, replica] = [await redisServer(), await redisServer()];
  const primaryClient = connect(primary.url);
  await waitUntil(() => primaryClient.status === 'ready');
  // Sync a new replica at once (the default waits 5 s for more replicas to share the transfer).
  await primaryClient.config('SET', 'repl-diskless-sync-delay', '0');
  const replicaClient = connect(replica.url);
  await waitUntil(() => replicaClient.status === 'ready');
  const link = await replicationLink(Number(new URL(primary.url).port));
  await replicaClient.call('REPLICAOF', '127.0.0.1', String(link.port));
  await waitUntil(async () => (await replicaClient.info('replication')).includes('master_link_status:up'), 15_000, 50);
  await waitUntil(async () => (await primaryClient.info('replication')).includes('connected_slaves:1'), 10_000, 50);
  return { primary, link, primaryClient, replicaClient };
}

async function maas(): Promise<{ sim: MaasSimulator; markBroken: () => Promise<unknown> }> {
  const sim = await startMaasSimulator({ scenario: scenario({ machines: [machine({ system_id: 'm1', hostname: 'm1', status: 'Deployed' })] }), apiKeys: [simKey] });
  const client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(simKey, 'test') }, { retries: 0, backoffMs: 1 });
  cleanups.push(async () => {
    await client.close();
    await sim.close();
  });
  return { sim, markBroken: () => client.markBroken('m1', 'journal-replica test') };
}

const writesOf = (sim: MaasSimulator) => sim.calls.filter((c) => c.method !== 'GET').length;

async function stepOnReplica(replica: Redis, prefix: string, planId: string): Promise<unknown> {
  const raw = await replica.hget(`${prefix}:repair:plan:${planId}:journal`, 'step:0');
  return raw ? JSON.parse(raw) : undefined;
}

describe("a repair write's sending mark and the Redis replica", () => {
  it('the mark is on the replica before the write reaches MAAS: the primary dying as the write goes out loses nothing', async () => {
    const { primary, link, primaryClient, replicaClient } = await primaryWithReplica();
    const { sim, markBroken } = await maas();
    const prefix = freshPrefix('journal-replica');
    const journal = createPlanStore(primaryClient, { prefix }).journal('p1');
    const writer = stepWriter({ journal, index: 0, entry: undefined, token: 7, at: Date.now });

    // The link to the replica lags 300 ms just as the mark is written.
    link.hold();
    const catchUp = setTimeout(() => link.release(), 300);
    cleanups.push(async () => clearTimeout(catchUp));
    let onReplicaWhenSent: unknown = 'not read';
    const outcome = await writer
      .write('mark-broken m1', async () => {
        // The worst moment: the primary dies with the write on its way to MAAS, and what it had not yet sent the replica is gone.
        await primary.kill!();
        link.cut();
        onReplicaWhenSent = await stepOnReplica(replicaClient, prefix, 'p1');
        return markBroken();
      })
      .then(() => 'answered', (err: unknown) => (err as Error).name);
    // MAAS got the write once; the journal's answer could not be recorded on the dead primary.
    expect(writesOf(sim)).toBe(1);
    expect(outcome).not.toBe('UnreplicatedMarkError');
    // What Sentinel would promote holds the mark: a later run sees the write as sent and does not send it again.
    expect(onReplicaWhenSent).toMatchObject({ state: 'started', writes: [{ name: 'mark-broken m1', run: 7, state: 'sending' }] });
  }, 30_000);

  it('a replica that never acknowledges: a write nobody declared idempotent is not sent, and says why; an idempotent one is', async () => {
    const { link, primaryClient } = await primaryWithReplica();
    const { sim, markBroken } = await maas();
    const prefix = freshPrefix('journal-replica');
    const journal = createPlanStore(primaryClient, { prefix }).journal('p2');
    const writer = stepWriter({ journal, index: 0, entry: undefined, token: 3, at: Date.now });
    link.hold();

    const refused = await writer.write('mark-broken m1', markBroken).then(() => undefined, (err: unknown) => err);
    expect(refused).toBeInstanceOf(UnreplicatedMarkError);
    expect((refused as Error).message).toMatch(/^mark-broken m1 was not sent: the journal's note that it is being sent reached no Redis replica within 1 s/);
    expect(writesOf(sim)).toBe(0);
    // Not sent, so not journaled as sent: a later run may send it.
    expect(await journal.get(0)).toMatchObject({ state: 'started', writes: [] });

    await writer.write('mark-broken m1 (idempotent in this test)', markBroken, { idempotent: true });
    expect(writesOf(sim)).toBe(1);
  }, 30_000);

  it('a primary without a replica: no WAIT is sent (it would sit out its timeout), the write goes out at once', async () => {
    const alone = await redisServer();
    const client = connect(alone.url);
    await waitUntil(() => client.status === 'ready');
    const { sim, markBroken } = await maas();
    const journal = createPlanStore(client, { prefix: freshPrefix('journal-replica') }).journal('p3');
    const writer = stepWriter({ journal, index: 0, entry: undefined, token: 1, at: Date.now });
    await writer.write('mark-broken m1', markBroken);
    expect(writesOf(sim)).toBe(1);
    expect(await client.info('commandstats')).not.toMatch(/^cmdstat_wait:/m);
    expect(await journal.get(0)).toMatchObject({ writes: [{ name: 'mark-broken m1', state: 'answered' }] });
  }, 30_000);
});
