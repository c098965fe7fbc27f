import type { SshSession } from '../../adapters/ssh/types.ts';
import { buildDomiflistBatch, splitDomiflistBatch } from '../../adapters/ssh/virsh.ts';

/** How long the watch waits for the host to say what the changed domains now hold. */
const READ_TIMEOUT_MS = 10_000;

/**
 * What the changed domains hold now, read over the watch's own session in one virsh process:
 * each domain's MACs (sorted), `missing`, or `unreadable`. Every worker watching the host reads
 * the same after the same change, and a change back (a revert) reads differently, so this is
 * what tells one change from the next. Null when the host could not be read at all.
 */
export async function readDomainStates(session: SshSession, uri: string, domains: readonly string[]): Promise<Record<string, string> | null> {
  const batch = buildDomiflistBatch(domains.map((domain) => ({ uri, domain })));
  try {
    const outputs = [];
    for (const command of batch.commands) outputs.push(await session.exec(command, { timeoutMs: READ_TIMEOUT_MS }));
    const result = splitDomiflistBatch(batch, outputs);
    if (result.hostFailure) return null;
    const states: Record<string, string> = {};
    domains.forEach((domain, i) => {
      const probe = result.domains[i];
      states[domain] = probe?.kind === 'found' ? probe.nics.map((n) => n.mac).sort().join(',') : probe?.kind === 'missing' ? 'missing' : 'unreadable';
    });
    return states;
  } catch {
    return null;
  }
}
