import type { Redis } from 'ioredis';
import { findJob } from '../../jobs/index.ts';
import type { JobDefinition } from '../../src/engine/job-types.ts';
import type { SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { ms } from './results-md.ts';

/** Shared by the benches that time a change to its alert: waiting, counting top-level alerts, figures and cleanup. */

export const pause = (msToWait: number) => new Promise((r) => setTimeout(r, msToWait));

export async function until<T>(what: string, f: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(5);
  }
}

/** The channel's messages that are not thread replies: the alerts, not their evidence. */
export const topLevelIn = (slack: SlackEmulator, channel: string) => slack.channelMessages(channel).filter((m) => !m.threadTs);

export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Nearest rank: the smallest value with at least q of the sample at or below it. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return Number.NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
}

/** Milliseconds below 10 s, seconds above: a 5-minute figure in ms reads as noise. */
export function duration(v: number): string {
  return Math.abs(v) < 10_000 ? ms(v) : `${(v / 1000).toFixed(1)} s`;
}

/** One row of a `| label | rounds | median | p95 | min | max |` table. */
export function latencyRow(label: string, xs: readonly number[]): string {
  return `| ${label} | ${xs.length} | ${duration(quantile(xs, 0.5))} | ${duration(quantile(xs, 0.95))} | ${duration(Math.min(...xs))} | ${duration(Math.max(...xs))} |`;
}

export interface Round {
  /** Change → alert posted, as measured. */
  alertMs: number;
  /** Change → the start of the scan that found it. */
  waitMs: number;
}

export interface RoundRig {
  slack: SlackEmulator;
  /** Start times of the scans, in Date.now() time. */
  scanStarts: number[];
  close(): Promise<void>;
}

export interface RoundPlan<R extends RoundRig> {
  rig: R;
  channel: string;
  mode: string;
  count: number;
  spreadMs: number;
  /** What the log line calls the scan ("scan", "mac-diff"). */
  scanName: string;
  change(rig: R, round: number): void;
  restore(rig: R, round: number): void;
}

/** Each round: a change at a random moment, measured to its alert; then put back and waited out to its resolve. */
export async function alertRounds<R extends RoundRig>(plan: RoundPlan<R>): Promise<Round[]> {
  const { rig, channel } = plan;
  const out: Round[] = [];
  try {
    // The first scan (the scheduler's, or none for 5m) settles before the first change.
    await pause(1500);
    for (let i = 0; i < plan.count; i++) {
      await pause(1000 + Math.random() * plan.spreadMs);
      const before = topLevelIn(rig.slack, channel).length;
      const changed = Date.now();
      plan.change(rig, i);
      const posted = await until('the alert', () => topLevelIn(rig.slack, channel)[before], 120_000);
      const scan = rig.scanStarts.find((t) => t >= changed) ?? posted.at;
      out.push({ alertMs: posted.at - changed, waitMs: scan - changed });
      process.stderr.write(`${plan.mode} round ${i + 1}/${plan.count}: alert after ${ms(posted.at - changed)} (${plan.scanName} started after ${ms(scan - changed)})\n`);
      plan.restore(rig, i);
      await until('the resolve', () => posted.text.startsWith('RESOLVED') || posted.updates.some((u) => u.text.startsWith('RESOLVED')), 120_000);
    }
    return out;
  } finally {
    await rig.close();
  }
}

/** The registry's jobs, with each start of `kind` noted in `starts` (Date.now() time): when the scan that finds a change began. */
export function jobsNotingStarts(kind: string, starts: number[]): (name: string) => JobDefinition | undefined {
  return (name) => {
    const job = findJob(name);
    if (!job) return undefined;
    return {
      name: job.name,
      run: async (ctx, data) => {
        if (name === kind) starts.push(Date.now());
        return job.run(ctx, data);
      },
    };
  };
}
