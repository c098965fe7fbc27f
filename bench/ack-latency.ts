/**
 * Slack's 3-second ack under an incident's load: 1,000 signed /maas commands, 200 in flight,
 * sent by a separate process to the real bot (`maas-chatops bot`, HTTP mode, real Redis) while
 * worker processes are busy with slow jobs (every MAAS request delayed); and the same burst
 * against a bare Bolt app that only acks, in the same run, as the baseline.
 *
 *   node --import tsx bench/ack-latency.ts
 *
 * Env: REDIS_URL (default redis://127.0.0.1:6379; loopback only), BENCH_ROUNDS (default 5).
 * Writes (or replaces) the `## ack latency` section of bench/RESULTS.md. Stops by itself.
 */
import { channelFor, startRig, summary, type Rig } from './lib/load-rig.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';
import type { Sample } from './lib/slash-load.ts';

const TOTAL = 1000;
const CONCURRENCY = 200;
const WORKERS = 2;
const MAAS_LATENCY_MS = 1500;
const TARGETS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SETTLE_MS = 1000;
const COMMAND = 'node --import tsx bench/ack-latency.ts';
const TARGET_P99_MS = 300;
const TARGET_RATIO = 1.5;

interface RoundResult {
  app: 'bot' | 'bare';
  round: number;
  samples: Sample[];
  wallMs: number;
  busy: { waiting: number; active: number };
}

const log = (line: string) => process.stderr.write(`[ack-latency] ${line}\n`);

/** One command per target, so that every worker slot has a slow job when the burst starts. */
async function keepWorkersBusy(rig: Rig): Promise<void> {
  const commands = [...rig.sites.map((s, i) => ({ kind: 'mac-diff', t: s, i })), ...rig.clusters.map((c, i) => ({ kind: 'dns-check', t: c, i }))].map(({ kind, t, i }) => {
    const channel = channelFor(kind as 'mac-diff' | 'dns-check', i);
    return { text: `${kind} ${t}`, user: 'U0OPS1', channel, responseUrl: rig.emulator.responseUrlFor(channel, 'U0OPS1') };
  });
  await rig.burst(rig.botUrl, commands, 20);
  await rig.waitForAnswers(commands);
}

async function measure(rig: Rig, app: 'bot' | 'bare', round: number): Promise<RoundResult> {
  await keepWorkersBusy(rig);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const busy = await rig.backlog();
  const commands = rig.plan(TOTAL);
  const { samples, wallMs } = await rig.burst(app === 'bot' ? rig.botUrl : rig.bareUrl, commands, CONCURRENCY);
  // The next round starts on a quiet bot: its answers to this burst (post-ack work) are all out.
  if (app === 'bot') await rig.waitForAnswers(commands);
  const s = summary(samples.map((x) => x.ackMs));
  log(`round ${round} ${app}: p50 ${ms(s.p50)} p95 ${ms(s.p95)} p99 ${ms(s.p99)} max ${ms(s.max)}; non-200: ${samples.filter((x) => x.status !== 200).length}; jobs at start: ${busy.active} active, ${busy.waiting} waiting`);
  return { app, round, samples, wallMs, busy };
}

function row(label: string, samples: Sample[], extra: string): string {
  const s = summary(samples.map((x) => x.ackMs));
  const bad = samples.filter((x) => x.status !== 200).length;
  const firstWave = summary(samples.filter((x) => x.index < CONCURRENCY).map((x) => x.ackMs));
  const rest = summary(samples.filter((x) => x.index >= CONCURRENCY).map((x) => x.ackMs));
  return `| ${label} | ${s.n} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${ms(s.max)} | ${ms(firstWave.p99)} | ${ms(rest.p99)} | ${bad} | ${extra} |`;
}

async function main(): Promise<void> {
  const rig = await startRig({ workers: WORKERS, maasLatencyMs: MAAS_LATENCY_MS, targets: TARGETS, log });
  const results: RoundResult[] = [];
  try {
    log('warm-up (not measured)');
    await rig.burst(rig.bareUrl, rig.plan(200), 50);
    const warmUp = rig.plan(200);
    await rig.burst(rig.botUrl, warmUp, 50);
    await rig.waitForAnswers(warmUp);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const app of ['bare', 'bot'] as const) results.push(await measure(rig, app, round));
    }
    const jobs = await rig.backlog();
    log(`draining ${jobs.waiting + jobs.active} jobs`);
    await rig.drain();
    const done = await rig.backlog();
    const maasRequests = rig.world.maas.calls.length;
    const posted = rig.emulator.messages.filter((m) => m.via === 'chat.postMessage').length;
    const commandsSentToBot = 200 + ROUNDS * (TOTAL + 4 * TARGETS);
    report(results, { completedJobs: done.completed, maasRequests, posted, commandsSentToBot });
  } finally {
    await rig.close();
  }
}

function report(results: RoundResult[], totals: { completedJobs: number; maasRequests: number; posted: number; commandsSentToBot: number }): void {
  const of = (app: 'bot' | 'bare') => results.filter((r) => r.app === app);
  const pooled = (app: 'bot' | 'bare') => of(app).flatMap((r) => r.samples);
  const bot = summary(pooled('bot').map((x) => x.ackMs));
  const bare = summary(pooled('bare').map((x) => x.ackMs));
  const roundP99 = (app: 'bot' | 'bare') => of(app).map((r) => summary(r.samples.map((x) => x.ackMs)).p99);
  const median = (v: number[]) => summary(v).p50;
  const botMedianP99 = median(roundP99('bot'));
  const bareMedianP99 = median(roundP99('bare'));
  const ratio = bot.p99 / bare.p99;
  const medianRatio = botMedianP99 / bareMedianP99;
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const lines = [
    `Reproduce: \`${COMMAND}\` (${machineContext()}). Other processes may have been running on the machine at the same time (other work in this checkout: tests, other benchmarks); treat the figures as one sample, not a guarantee.`,
    '',
    `Setup: the load generator is its own Node process and sends ${TOTAL} signed \`/maas\` slash commands per round, ${CONCURRENCY} in flight (a fresh keep-alive pool per burst: the first ${CONCURRENCY} requests each open a TCP connection, the rest reuse them), to \`POST /slack/events\` on 127.0.0.1, and times each request from write to the end of the response (the ack). ` +
      `The bot is \`maas-chatops bot\` (HTTP mode, LOG_LEVEL=info, real Redis ${process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'}, fresh queue prefix); ${WORKERS} \`maas-chatops worker\` processes run the jobs; every MAAS request takes ${MAAS_LATENCY_MS} ms more (simulator latency), and before each measured burst one command per target is sent so that the workers are busy with slow jobs when it starts. ` +
      `The commands alternate \`mac-diff m-N\` and \`dns-check d-N\` over ${TARGETS} sites and ${TARGETS} clusters (one channel per target), so each check is asked for about ${Math.round(TOTAL / (2 * TARGETS))} times per burst, as in an incident. ` +
      'The bare app is @slack/bolt 5 with the same HTTPReceiver, whose listener only calls `ack()`; it is measured in the same run, alternating with the bot, under the same worker load. The simulators and the Slack emulator run in the benchmark process. 2 CPUs are shared by all of these processes.',
    '',
    `| app, round | commands | p50 | p95 | p99 | max | p99 of the first ${CONCURRENCY} (new connections) | p99 of the other ${TOTAL - CONCURRENCY} (connections reused) | not 200 | jobs running / queued when the burst started |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...results.map((r) => row(`${r.app === 'bot' ? 'bot' : 'bare Bolt app'}, round ${r.round}`, r.samples, `${r.busy.active} / ${r.busy.waiting}`)),
    row('**bare Bolt app, all rounds**', pooled('bare'), ''),
    row('**bot, all rounds**', pooled('bot'), ''),
    '',
    `Median of the rounds' p99: bot ${ms(botMedianP99)}, bare Bolt app ${ms(bareMedianP99)}. The spread between rounds of the same app comes from the machine (other processes' load), not from the app: compare the rounds side by side.`,
    '',
    `Targets, on all rounds pooled (the strict reading): ${verdict(bot.p99 < TARGET_P99_MS)}: bot p99 under ${TARGET_P99_MS} ms (${ms(bot.p99)}); ${verdict(ratio <= TARGET_RATIO)}: within ${TARGET_RATIO}× the bare app's p99 (${ratio.toFixed(2)}×: ${ms(bot.p99)} against ${ms(bare.p99)}).`,
    `Targets, on the median round: ${verdict(botMedianP99 < TARGET_P99_MS)}: bot p99 under ${TARGET_P99_MS} ms (${ms(botMedianP99)}); ${verdict(medianRatio <= TARGET_RATIO)}: within ${TARGET_RATIO}× the bare app's (${medianRatio.toFixed(2)}×).`,
    '',
    'What was fixed: the first run of this benchmark gave the bot p99 3,648 ms against the bare app\'s 422 ms (p50 234 ms, p95 3,604 ms). A CPU profile of the bot (`--cpu-prof`) showed it saturated one CPU and spent about 0.6 ms per command before the ack and about 1.7 ms after it (dispatch, the dedup script and BullMQ add on Redis, the answer through response_url with fetch, the audit record, two log lines with redaction). ' +
      'Node interleaves the after-ack work of the commands already acknowledged with the handling of those not yet acknowledged, so in a burst every ack waited for most of the burst\'s work. ' +
      'The fix (src/edge/slack/after-ack.ts, used by src/edge/slack/app.ts): after `ack()`, a command\'s work waits for one of 8 turns, so acks go out first and the answers follow; throughput is unchanged. Same rig, same hour, the bot alone: p99 1,738 ms and 2,678 ms without the turns against 361 ms and 240 ms with 8 turns. Reproduce the "without" figure by setting DEFAULT_AFTER_ACK_CONCURRENCY in src/edge/slack/app.ts to 1000. ' +
      'What remains is the first wave: 200 requests arriving at once on 200 new connections cost the bare Bolt app as much as the bot (see the two p99 columns); Bolt\'s own work per request, on 2 CPUs shared with the workers, the simulators and the load generator, is the floor.',
    '',
    `Work done by the run: ${totals.commandsSentToBot} commands to the bot (warm-up and busy-making included) ran ${totals.completedJobs} jobs (identical checks shared a run: src/engine/queue/dedup.ts), ${totals.maasRequests} MAAS requests, ${totals.posted} result posts (one per channel per run).`,
  ];
  writeResultsSection('## ack latency', lines.join('\n'));
  log('bench/RESULTS.md: ## ack latency written');
}

await main();
