import { createHash, randomUUID } from 'node:crypto';
import { changesDefinition, type LifecycleEvent } from '../../adapters/ssh/virsh-events.ts';

/**
 * The domains of one VM host defined or undefined since the last mac-diff the watch asked for.
 * An OpenTofu replace undefines a domain and defines it again with new NICs (new MACs): the
 * mac-diff worth running is the one after the Defined, so a domain whose last event is Undefined
 * waits a while for its redefinition before the batch is ready.
 */
export class LifecycleChanges {
  readonly #domains = new Map<string, string[]>();

  /** Keeps the event if it changes a definition; says whether it did. */
  add(event: LifecycleEvent): boolean {
    if (!changesDefinition(event)) return false;
    const seen = this.#domains.get(event.domain) ?? [];
    seen.push(event.event);
    this.#domains.set(event.domain, seen);
    return true;
  }

  get empty(): boolean {
    return this.#domains.size === 0;
  }

  /** Some domain was undefined and not (yet) defined again. */
  get awaitingRedefinition(): boolean {
    return [...this.#domains.values()].some((events) => events[events.length - 1] === 'Undefined');
  }

  /** Takes the batch out, leaving this empty. */
  take(): LifecycleBatch {
    const domains = [...this.#domains.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.#domains.clear();
    return { domains: domains.map(([domain, events]) => ({ domain, events })) };
  }
}

export interface LifecycleBatch {
  /** By domain name, each with its Defined/Undefined events in order. */
  domains: { domain: string; events: string[] }[];
}

/** One line per domain, for the log and the scan's record of why it ran. */
export function batchTriggers(vmHost: string, batch: LifecycleBatch): string[] {
  return batch.domains.map(({ domain, events }) => `VM host ${vmHost}: domain ${JSON.stringify(domain)} ${describe(events)}`);
}

function describe(events: string[]): string {
  const last = events[events.length - 1];
  if (events.length > 1 && last === 'Defined') return 'undefined and defined again (its NICs may have new MACs)';
  return last === 'Defined' ? 'defined' : 'undefined';
}

/**
 * The same in every process that saw the same change on the same host: several workers watching
 * one host queue one mac-diff. virsh gives no event sequence number to share, so the key is the
 * events and what the domains hold after them (`states`, read from the host: a change back to
 * the old MACs is a new key). Without states (the host could not be read) the key is this
 * process's own: at worst each worker queues its mac-diff.
 */
export function batchKey(site: string, vmHost: string, batch: LifecycleBatch, states: Record<string, string> | null): string {
  const text = batch.domains.map(({ domain, events }) => `${domain}\0${events.join(',')}\0${states ? (states[domain] ?? '') : randomUUID()}`).join('\n');
  return createHash('sha256').update(site).update('\0').update(vmHost).update('\0').update(text).digest('hex').slice(0, 24);
}
