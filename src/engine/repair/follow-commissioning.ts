/**
 * Follows a machine MAAS is commissioning until it is Ready or failed, bounded by a timeout.
 * MAAS fails a node it has not heard from after its node_timeout (30 minutes by default,
 * maascommon/constants.py NODE_TIMEOUT; status_monitor.py), so the default bound is above that.
 * Reads only: it never commissions, aborts or marks anything.
 */
import { formatDuration } from '../../core/duration.ts';
import { describeError } from '../../core/errors.ts';
import { NODE_STATUS } from '../../adapters/maas/node-status.ts';
import type { MaasClient, MaasMachine } from '../../adapters/maas/types.ts';

export const DEFAULT_COMMISSION_TIMEOUT_MS = 40 * 60_000;
export const DEFAULT_COMMISSION_POLL_MS = 15_000;
/** A progress line at least this often while the status stays the same. */
const HEARTBEAT_MS = 5 * 60_000;

/** Commissioning runs in these; anything else is where it ended. Commissioning runs its tests too. */
const RUNNING: ReadonlySet<number> = new Set([NODE_STATUS.COMMISSIONING, NODE_STATUS.TESTING]);

export interface CommissioningProgress {
  systemId: string;
  hostname: string;
  statusName: string;
  elapsedMs: number;
  /** One line for a person. */
  text: string;
}

export interface FollowOptions {
  /** Give up following after this long (the machine keeps commissioning). */
  timeoutMs?: number;
  pollMs?: number;
  onProgress?: (progress: CommissioningProgress) => void | Promise<void>;
  /** For tests: a fake clock that `sleep` advances. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  signal?: AbortSignal;
}

export type CommissioningResult =
  /** Ready: MAAS commissioned it. */
  | { outcome: 'ready'; machine: MaasMachine; elapsedMs: number; polls: number }
  /** It ended in another state (Failed commissioning, Failed testing, ...): `message` is MAAS's own. */
  | { outcome: 'failed'; machine: MaasMachine; message: string; elapsedMs: number; polls: number }
  /** Still commissioning (or unreadable) when the bound ran out, or the follow was cancelled. */
  | { outcome: 'timeout'; machine: MaasMachine | undefined; lastError?: string; elapsedMs: number; polls: number };

const realSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/** Polls `GET machines/<id>/` every pollMs until the machine leaves Commissioning/Testing or timeoutMs passes. */
export async function followCommissioning(maas: MaasClient, systemId: string, options: FollowOptions = {}): Promise<CommissioningResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMISSION_TIMEOUT_MS;
  const pollMs = Math.max(1, options.pollMs ?? DEFAULT_COMMISSION_POLL_MS);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => realSleep(ms, options.signal));
  const started = now();
  let polls = 0;
  let machine: MaasMachine | undefined;
  let lastError: string | undefined;
  let reported: { status: string; at: number } | undefined;

  for (;;) {
    const elapsedMs = now() - started;
    try {
      polls += 1;
      machine = await maas.getMachine(systemId);
      lastError = undefined;
    } catch (err) {
      lastError = describeError(err);
    }
    if (machine && !lastError && !RUNNING.has(machine.status)) {
      if (machine.status === NODE_STATUS.READY) return { outcome: 'ready', machine, elapsedMs, polls };
      return { outcome: 'failed', machine, message: statusMessageOf(machine), elapsedMs, polls };
    }
    if (machine && !lastError && (reported?.status !== machine.status_name || elapsedMs - reported.at >= HEARTBEAT_MS)) {
      reported = { status: machine.status_name, at: elapsedMs };
      await options.onProgress?.(progressOf(machine, elapsedMs));
    }
    if (options.signal?.aborted || elapsedMs >= timeoutMs) {
      return { outcome: 'timeout', machine, ...(lastError ? { lastError } : {}), elapsedMs, polls };
    }
    await sleep(Math.min(pollMs, Math.max(1, timeoutMs - elapsedMs)));
  }
}

/** MAAS's own words for why the machine is where it is: error_description, else status_message. */
export function statusMessageOf(machine: MaasMachine): string {
  const said = machine.error_description?.trim() || machine.status_message?.trim();
  return said ? `${machine.status_name}: ${said}` : `${machine.status_name} (MAAS gave no message; see the machine's events in MAAS)`;
}

function progressOf(machine: MaasMachine, elapsedMs: number): CommissioningProgress {
  const since = elapsedMs < 1_000 ? 'just started' : `for ${formatDuration(elapsedMs)}`;
  return {
    systemId: machine.system_id,
    hostname: machine.hostname,
    statusName: machine.status_name,
    elapsedMs,
    text: `${machine.hostname}: ${machine.status_name} (${since})${machine.status_message ? `: ${machine.status_message}` : ''}`,
  };
}
