/**
 * Redis Sentinel failover as the bot sees it: `maas-chatops serve` (the lab's simulators, the
 * Slack emulator) on a real primary, one replica and three sentinels on loopback, logged in as
 * its ACL user. A burst of 200 dns-checks, one every 25 ms; the primary is killed with SIGKILL
 * at the 40th. Measured: the time from the primary's death to the first request sent after it
 * that was queued, and how many of the 200 were answered "failing over". Baseline, in the same
 * process: the same burst with no failover.
 *
 *   node --import tsx bench/redis-failover.ts
 *
 * Env: BENCH_ROUNDS (default 3), BENCH_DOWN_AFTER_MS (Sentinel's down-after-milliseconds, default 1000).
 * Writes (or replaces) the `## redis failover` section of bench/RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import { LAB_CHANNELS, LAB_USERS } from '../lab/lab-world.ts';
import { startSentinelBot, type SentinelBot } from '../lab/sentinel-bot.ts';
import { silentLogger } from '../src/core/log.ts';
import { summary } from './lib/load-rig.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';

const COMMAND = 'node --import tsx bench/redis-failover.ts';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DOWN_AFTER_MS = Number(process.env.BENCH_DOWN_AFTER_MS ?? 1000);
const BURST = 200;
const KILL_AT = 40;
const PACE_MS = 25;
const FAILING_OVER = /failing over/;

interface Request {
  sentAt: number;
  answeredAt: number;
  queued: boolean;
  failingOver: boolean;
  other?: string;
}

interface BurstResult {
  requests: Request[];
  killedAt?: number;
  /** First 200 from /readyz after the kill (ms after it). */
  readyAfterMs?: number;
}

async function burst(bot: SentinelBot, kill: boolean): Promise<BurstResult> {
  const pending: Promise<Request>[] = [];
  let killedAt: number | undefined;
  let readyAfterMs: number | undefined;
  let watching = true;
  const readiness = (async () => {
    while (watching) {
      if (killedAt !== undefined && readyAfterMs === undefined && (await fetch(`${bot.url}/readyz`)).status === 200) readyAfterMs = Date.now() - killedAt;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  for (let i = 0; i < BURST; i++) {
    if (kill && i === KILL_AT) {
      killedAt = Date.now();
      await bot.lab.primary.kill();
    }
    const sentAt = Date.now();
    pending.push(
      bot.runtime.queues
        .submit('dns-check', { target: 'prod', requestedBy: LAB_USERS.operator, reply: { channel: LAB_CHANNELS.ops, user: LAB_USERS.operator, threadTs: `1700000000.${i}` } })
        .then(
          () => ({ sentAt, answeredAt: Date.now(), queued: true, failingOver: false }),
          (err: Error) => ({ sentAt, answeredAt: Date.now(), queued: false, failingOver: FAILING_OVER.test(err.message), ...(FAILING_OVER.test(err.message) ? {} : { other: err.message }) }),
        ),
    );
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  const requests = await Promise.all(pending);
  if (kill) {
    const deadline = Date.now() + 30_000;
    while (readyAfterMs === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  }
  watching = false;
  await readiness;
  return { requests, ...(killedAt !== undefined ? { killedAt } : {}), ...(readyAfterMs !== undefined ? { readyAfterMs } : {}) };
}

async function round(kill: boolean): Promise<BurstResult> {
  const bot = await startSentinelBot({ prefix: `bench-failover-${randomUUID().slice(0, 8)}`, log: silentLogger(), downAfterMs: DOWN_AFTER_MS });
  try {
    return await burst(bot, kill);
  } finally {
    await bot.close();
  }
}

function median(values: number[]): number {
  return values.length ? summary(values).p50 : Number.NaN;
}

async function main(): Promise<void> {
  const baseline: BurstResult[] = [];
  const failover: BurstResult[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    baseline.push(await round(false));
    failover.push(await round(true));
    console.log(`round ${r + 1}/${ROUNDS} done`);
  }
  const firstAnswered = failover.map((f) => {
    const after = f.requests.filter((q) => q.queued && q.sentAt >= (f.killedAt ?? 0));
    return Math.min(...after.map((q) => q.answeredAt)) - (f.killedAt ?? 0);
  });
  const refusedCounts = failover.map((f) => f.requests.filter((q) => q.failingOver).length);
  const otherAnswers = [...baseline, ...failover].flatMap((f) => f.requests.filter((q) => !q.queued && !q.failingOver).map((q) => q.other));
  const unanswered = [...baseline, ...failover].reduce((n, f) => n + (BURST - f.requests.length), 0);
  const latency = (fs: BurstResult[]) => summary(fs.flatMap((f) => f.requests.filter((q) => q.queued).map((q) => q.answeredAt - q.sentAt)));
  const base = latency(baseline);
  const fail = latency(failover);
  const rows = [
    `| measure | baseline (no failover) | primary killed at request ${KILL_AT} |`,
    '| --- | ---: | ---: |',
    `| primary's death → first request sent after it answered "queued" (median of ${ROUNDS}; each) | - | ${ms(median(firstAnswered))} (${firstAnswered.map((v) => ms(v)).join(', ')}) |`,
    `| primary's death → /readyz 200 again (median) | - | ${ms(median(failover.map((f) => f.readyAfterMs ?? Number.NaN)))} |`,
    `| requests answered "failing over, try again" of ${BURST} (each round) | ${baseline.map((f) => f.requests.filter((q) => q.failingOver).length).join(', ')} | ${refusedCounts.join(', ')} |`,
    `| requests answered "queued" of ${BURST} (each round) | ${baseline.map((f) => f.requests.filter((q) => q.queued).length).join(', ')} | ${failover.map((f) => f.requests.filter((q) => q.queued).length).join(', ')} |`,
    `| time to answer "queued": p50 / p95 / max | ${ms(base.p50)} / ${ms(base.p95)} / ${ms(base.max)} | ${ms(fail.p50)} / ${ms(fail.p95)} / ${ms(fail.max)} |`,
  ];
  const body = [
    `Reproduce: \`${COMMAND}\` (${machineContext()}).`,
    '',
    `\`maas-chatops serve\` on the lab's simulators, its Redis a real primary, one replica and three \`redis-server --sentinel\` (quorum 2,`,
    `\`down-after-milliseconds ${DOWN_AFTER_MS}\`) on loopback, logged in as the ACL user of docs/operations.md. ${BURST} dns-check requests`,
    `through the bot's queue (JobQueues.submit, as a slash command does), one every ${PACE_MS} ms; in the failover rounds the primary is killed`,
    `with SIGKILL before request ${KILL_AT}. ${ROUNDS} rounds each, baseline and failover alternating, fresh servers every round.`,
    '',
    ...rows,
    '',
    `Every request got exactly one answer: ${unanswered} unanswered, ${otherAnswers.length} answered anything but "queued" or "failing over".`,
    'The gap is Sentinel\'s: `down-after-milliseconds` before the primary counts as dead, then the vote and the promotion; the bot',
    'asks the sentinels again every 100 ms to 1 s meanwhile. A request in the gap waits up to 1 s for a primary before it is told;',
    'requests answered "queued" wait for one replica to hold the job (WAIT), which the baseline pays too.',
  ].join('\n');
  console.log(body);
  writeResultsSection('## redis failover', body);
}

await main();
