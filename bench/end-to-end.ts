/**
 * From slash command to posted result, under the ack benchmark's load (1,000 commands, 200 in
 * flight, 20 sites and 20 clusters, every MAAS request slowed), with 1, 2 and 4 worker processes
 * on one Redis. Time is taken from the moment the load generator sent a command to the first
 * result posted (chat.postMessage) in that command's channel afterwards.
 *
 *   node --import tsx bench/end-to-end.ts
 *
 * Env: REDIS_URL (default redis://127.0.0.1:6379; loopback only).
 * Writes (or replaces) the `## end-to-end` section of bench/RESULTS.md. Stops by itself.
 */
import { startRig, summary, type PlannedCommand, type Rig } from './lib/load-rig.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';
import type { Sample } from './lib/slash-load.ts';

const TOTAL = 1000;
const CONCURRENCY = 200;
const MAAS_LATENCY_MS = 1500;
const TARGETS = 20;
const WORKER_STEPS = [1, 2, 4];
const COMMAND = 'node --import tsx bench/end-to-end.ts';

const log = (line: string) => process.stderr.write(`[end-to-end] ${line}\n`);

interface StepResult {
  workers: number;
  byKind: Record<'mac-diff' | 'dns-check', number[]>;
  lastResultMs: number;
  jobs: number;
  maasRequests: number;
  missing: number;
}

async function step(rig: Rig, workers: number): Promise<StepResult> {
  await rig.drain();
  const jobsBefore = (await rig.backlog()).completed;
  const maasBefore = rig.world.maas.calls.length;
  const firstMessage = rig.emulator.messages.length;
  const commands = rig.plan(TOTAL);
  const { samples } = await rig.burst(rig.botUrl, commands, CONCURRENCY);
  await rig.drain();
  await rig.waitForAnswers(commands);
  await new Promise((r) => setTimeout(r, 1000));
  const posts = rig.emulator.messages.slice(firstMessage).filter((m) => m.via === 'chat.postMessage');
  const byKind: StepResult['byKind'] = { 'mac-diff': [], 'dns-check': [] };
  const start = Math.min(...samples.map((s) => s.sentAt));
  let last = 0;
  let missing = 0;
  samples.forEach((s: Sample) => {
    const c = commands[s.index] as PlannedCommand;
    const result = posts.find((m) => m.channel === c.channel && m.at >= s.sentAt);
    if (!result) {
      missing += 1;
      return;
    }
    byKind[c.kind].push(result.at - s.sentAt);
    last = Math.max(last, result.at - start);
  });
  const jobs = (await rig.backlog()).completed - jobsBefore;
  const r: StepResult = { workers, byKind, lastResultMs: last, jobs, maasRequests: rig.world.maas.calls.length - maasBefore, missing };
  const mac = summary(byKind['mac-diff']);
  const dns = summary(byKind['dns-check']);
  log(`${workers} worker(s): mac-diff p50 ${ms(mac.p50)} p95 ${ms(mac.p95)} max ${ms(mac.max)}; dns-check p50 ${ms(dns.p50)} p95 ${ms(dns.p95)} max ${ms(dns.max)}; last result after ${ms(last)}; ${jobs} jobs; ${missing} without a result`);
  return r;
}

async function main(): Promise<void> {
  const rig = await startRig({ workers: WORKER_STEPS[0]!, maasLatencyMs: MAAS_LATENCY_MS, targets: TARGETS, log });
  const results: StepResult[] = [];
  try {
    log('warm-up (not measured)');
    const warmUp = rig.plan(200);
    await rig.burst(rig.botUrl, warmUp, 50);
    await rig.waitForAnswers(warmUp);
    for (const n of WORKER_STEPS) {
      if (rig.workers.length < n) await rig.addWorkers(n - rig.workers.length);
      results.push(await step(rig, n));
    }
  } finally {
    await rig.close();
  }
  report(results);
}

function report(results: StepResult[]): void {
  const cell = (values: number[]) => {
    const s = summary(values);
    return `${ms(s.p50)} / ${ms(s.p95)} / ${ms(s.max)}`;
  };
  const base = results[0]?.lastResultMs ?? NaN;
  const lines = [
    `Reproduce: \`${COMMAND}\` (${machineContext()}). Other processes may have been running on the machine at the same time; treat the figures as one sample.`,
    '',
    `Setup: as in \`## ack latency\` (the same rig: \`maas-chatops bot\` in HTTP mode, a separate load generator, real Redis, the simulators and the Slack emulator in the benchmark process, every MAAS request ${MAAS_LATENCY_MS} ms slower): ` +
      `one burst of ${TOTAL} commands, ${CONCURRENCY} in flight, alternating \`mac-diff m-N\` and \`dns-check d-N\` over ${TARGETS} sites and ${TARGETS} clusters (one channel each), with 1, 2 and 4 \`maas-chatops worker\` processes (each with 4 slots per job kind) on one Redis and one queue prefix. ` +
      'A command\'s time runs from the moment the load generator sent it to the first result posted in its channel afterwards; a command that joined a check already running gets that check\'s result, so its time can be shorter than one run. ' +
      'A mac-diff makes its two MAAS requests in parallel and one SSH command per VM host; a dns-check reads the MaasCluster first, then MAAS and the cluster in parallel: each takes at least one MAAS delay.',
    '',
    '| worker processes | mac-diff p50 / p95 / max | dns-check p50 / p95 / max | last result after | jobs run | MAAS requests | commands without a result |',
    '| ---: | --- | --- | ---: | ---: | ---: | ---: |',
    ...results.map((r) => `| ${r.workers} | ${cell(r.byKind['mac-diff'])} | ${cell(r.byKind['dns-check'])} | ${ms(r.lastResultMs)}${r === results[0] ? '' : ` (${(base / r.lastResultMs).toFixed(2)}× faster)`} | ${r.jobs} | ${r.maasRequests} | ${r.missing} |`),
    '',
    'Reading: the commands of a burst share runs (dedup), so the work is about one job per target per wave of requests, not one per command; more worker processes add slots (4 per kind each), so fewer waves of jobs queue behind each other. ' +
      'Beyond the point where every distinct check of a burst has a slot, more workers cannot help: a result still waits for one MAAS delay per sequential request.',
  ];
  writeResultsSection('## end-to-end', lines.join('\n'));
  log('bench/RESULTS.md: ## end-to-end written');
}

await main();
