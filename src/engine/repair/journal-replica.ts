import type { Redis } from 'ioredis';
import type { ReplicaConfirmation } from './journal.ts';

/** How long a write waits for a replica to hold its `sending` mark before it is not sent. */
export const REPLICA_CONFIRM_MS = 1_000;

/**
 * Redis replicates asynchronously: a primary that dies right after a write may take it along, and
 * Sentinel promotes a replica that never had it. WAIT blocks until a replica acknowledged every
 * write this connection sent before it (https://redis.io/commands/wait; best effort, not strong
 * consistency, but Sentinel promotes the replica with the most data, and one that acknowledged
 * has it). Asked only when the primary has a replica: WAIT would otherwise sit out its timeout.
 * It blocks the connection it is sent on, so it is bounded; the journal writes on that connection.
 */
export async function confirmOnReplica(redis: Redis, timeoutMs = REPLICA_CONFIRM_MS): Promise<ReplicaConfirmation> {
  const replicas = Number(/^connected_slaves:(\d+)/m.exec(await redis.info('replication'))?.[1] ?? 0);
  if (replicas < 1) return 'no-replica';
  return (await redis.wait(1, timeoutMs)) >= 1 ? 'replicated' : 'unconfirmed';
}
