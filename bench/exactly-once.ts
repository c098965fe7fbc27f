/**
 * Exactly once under a Redis outage: an approved fix-macs (two machines, four steps, one MAAS write
 * each: mark_broken, the interface PUT and commission on a Failed commissioning machine, the PUT on a Ready one) runs on BullMQ workers against a MAAS that takes 1.5 s per request; at a random moment of
 * the run a private redis-server (AOF, appendfsync always) is SIGKILLed and started again after
 * longer than the jobs' lock. Per trial: which step was in flight, the time from Redis's return to
 * the repair's completion (the summary posted), and MAAS writes per step, counted by the simulator.
 * Beside it, in the same process, the same repair without an outage.
 *
 *   node --import tsx bench/exactly-once.ts [trials]
 *
 * Needs redis-server on PATH. Writes (or replaces) the `## exactly once under a Redis outage`
 * section of bench/RESULTS.md.
 */
import { randomInt } from 'node:crypto';
import { fixMacsJob } from '../jobs/fix-macs.ts';
import { fixMacsRepair } from '../src/features/macs/repair.ts';
import type { LockTuning } from '../src/engine/job-types.ts';
import { machine, virshPower } from '../lab/maas-sim/index.ts';
import { startOutageRig } from '../lab/repair-outage.ts';
import { startMacLab } from '../lab/vmhost-sim/index.ts';
import { silentLogger } from '../src/core/log.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';

const COMMAND = 'node --import tsx bench/exactly-once.ts';
const TRIALS = Number(process.argv[2] ?? 10);
const MAAS_LATENCY_MS = 1_500;
/** The repair kinds' lock, shrunk as in the tests: an outage longer than it causes the same takeover as one longer than the production minute. */
const LOCK: LockTuning = { lockDurationMs: 4_000, stalledIntervalMs: 1_000, maxStalledCount: 5 };
const OUTAGE_MS = 6_000;
const HOST = '127.0.0.1';
const LIVE = '52:54:00:81:40:17';
const STEPS = ['site-b-node1 mark-broken', 'site-b-node1 set-mac', 'site-b-node1 commission', 'site-b-node4 set-mac'];

interface Trial {
  /** ms after the job was queued; undefined: no outage. */
  killAtMs?: number;
  inFlight: string;
  totalMs: number;
  /** From Redis answering again to the summary posted. */
  recoveryMs?: number;
  /** From Redis answering again to the new run's "Resuming" post. */
  takeoverMs?: number;
  writes: number;
  maxPerWrite: number;
  outcomes: string;
  resumed: number;
}

async function trial(killAtMs: number | undefined): Promise<Trial> {
  const lab = await startMacLab({
    machines: [
      machine({ system_id: 'sb0001', hostname: 'site-b-node1', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:b0:00:01'], live_boot_mac: LIVE, power: virshPower(HOST, 'site-b-node1') }),
      machine({ system_id: 'sb0004', hostname: 'site-b-node4', zone: 'site-b', status: 'Ready', macs: ['52:54:00:b0:00:04'], power: virshPower(HOST, 'site-b-node4') }),
    ],
    sites: [
      {
        name: 'site-b',
        zone: 'site-b',
        vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', nics: [{ mac: LIVE }] }, { name: 'site-b-node4', nics: [{ mac: '52:54:00:84:40:5c' }] }] } }],
      },
    ],
  });
  const rig = await startOutageRig({ jobs: [fixMacsJob], context: { config: lab.config, adapters: lab.adapters }, lock: LOCK });
  try {
    const plan = await fixMacsRepair.plan({ config: lab.config, adapters: lab.adapters, log: silentLogger() }, 'site-b');
    if (plan.steps.map((s) => `${s.subject} ${s.action}`).join() !== STEPS.join()) throw new Error(`unexpected plan: ${plan.steps.map((s) => s.action).join(', ')}`);
    lab.maas.setLatency(MAAS_LATENCY_MS);
    lab.maas.resetCalls();
    const queuedAt = performance.now();
    await rig.approveAndQueue(plan);
    let inFlight = '-';
    let backAt: number | undefined;
    if (killAtMs !== undefined) {
      await sleep(killAtMs - (performance.now() - queuedAt));
      const writesSoFar = lab.maas.calls.filter((c) => c.method !== 'GET').length;
      inFlight = writesSoFar < STEPS.length ? `${STEPS[writesSoFar]}${lastIsWrite(lab.maas.calls) ? ' (its write inside MAAS)' : ''}` : 'after the last write';
      await rig.killRedis();
      await sleep(OUTAGE_MS);
      await rig.restartRedis();
      backAt = performance.now();
    }
    const deadline = Date.now() + 180_000;
    let resumedAt: number | undefined;
    while (rig.said.summaries.length === 0) {
      if (Date.now() > deadline) throw new Error(`no summary within 180 s; thread: ${rig.said.thread.join(' | ')}`);
      if (resumedAt === undefined && rig.said.thread.some((t) => t.startsWith('Resuming after a restart'))) resumedAt = performance.now();
      await sleep(10);
    }
    const doneAt = performance.now();
    const stored = await rig.finished(plan.id, 10_000);
    const writes = lab.maas.calls.filter((c) => c.method !== 'GET');
    const perWrite = new Map<string, number>();
    for (const c of writes) perWrite.set(`${c.method} ${c.path} ${c.op ?? ''}`, (perWrite.get(`${c.method} ${c.path} ${c.op ?? ''}`) ?? 0) + 1);
    return {
      ...(killAtMs === undefined ? {} : { killAtMs }),
      inFlight,
      totalMs: doneAt - queuedAt,
      ...(backAt === undefined ? {} : { recoveryMs: doneAt - backAt }),
      ...(backAt === undefined || resumedAt === undefined ? {} : { takeoverMs: resumedAt - backAt }),
      writes: writes.length,
      maxPerWrite: Math.max(...perWrite.values()),
      outcomes: (stored.results ?? []).map((r) => r.outcome).join(','),
      resumed: rig.said.thread.filter((t) => t.startsWith('Resuming after a restart')).length,
    };
  } finally {
    await rig.close();
    await lab.close();
  }
}

function lastIsWrite(calls: { method: string; status: number }[]): boolean {
  const last = calls.at(-1);
  return last !== undefined && last.method !== 'GET' && last.status === 0;
}

const sleep = (n: number) => new Promise((r) => setTimeout(r, Math.max(0, n)));

function stats(values: number[]): { median: number; min: number; max: number } {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)] ?? NaN, min: s[0] ?? NaN, max: s.at(-1) ?? NaN };
}

async function main(): Promise<void> {
  const baseline = await trial(undefined);
  process.stdout.write(`baseline: ${ms(baseline.totalMs)}, ${baseline.writes} writes\n`);
  const trials: Trial[] = [];
  for (let i = 0; i < TRIALS; i++) {
    // Anywhere from the re-measure to the last step of the baseline run.
    const t = await trial(randomInt(500, Math.max(1_000, Math.floor(baseline.totalMs * 0.95))));
    trials.push(t);
    process.stdout.write(`trial ${i + 1}: kill at ${ms(t.killAtMs ?? 0)} (${t.inFlight}), back → done ${ms(t.recoveryMs ?? NaN)}, ${t.writes} writes, max ${t.maxPerWrite} per write, ${t.outcomes}\n`);
  }
  const recovery = stats(trials.map((t) => t.recoveryMs ?? NaN));
  const takeover = stats(trials.map((t) => t.takeoverMs ?? NaN));
  const perStep = trials.reduce((n, t) => n + t.writes, 0) / (trials.length * STEPS.length);
  const allVerified = trials.every((t) => t.outcomes === 'verified,verified,verified,verified');
  const text = [
    `Reproduce: \`${COMMAND}\` (${machineContext()}).`,
    '',
    `An approved fix-macs (2 machines, ${STEPS.length} steps, one MAAS write each) on two BullMQ workers; MAAS answers every request in ${ms(MAAS_LATENCY_MS)};`,
    `a private redis-server (appendonly yes, appendfsync always) is SIGKILLed at a random moment of the run and started again ${ms(OUTAGE_MS)} later from its AOF.`,
    `The repair jobs' lock is shrunk to ${ms(LOCK.lockDurationMs)} (stalled check every ${ms(LOCK.stalledIntervalMs)}) so that a ${ms(OUTAGE_MS)} outage outlasts it: the sequence (lock and lease lapse,`,
    'the job handed out again, a fenced takeover) is the one an outage longer than the production 60 s lock causes, in seconds instead of minutes. Writes are counted by the MAAS simulator.',
    '',
    `| trial | Redis killed at | next write to send | Redis back → "Resuming" posted | Redis back → repair done | MAAS writes | most sends of one write | outcomes | "Resuming" posts |`,
    '| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |',
    `| baseline (no outage) | - | - | - | (whole run ${ms(baseline.totalMs)}) | ${baseline.writes} | ${baseline.maxPerWrite} | ${baseline.outcomes} | ${baseline.resumed} |`,
    ...trials.map((t, i) => `| ${i + 1} | ${ms(t.killAtMs ?? NaN)} | ${t.inFlight} | ${ms(t.takeoverMs ?? NaN)} | ${ms(t.recoveryMs ?? NaN)} | ${t.writes} | ${t.maxPerWrite} | ${t.outcomes} | ${t.resumed} |`),
    '',
    `Writes sent per step over ${trials.length} outages: **${perStep.toFixed(2)}** (${trials.reduce((n, t) => n + t.writes, 0)} writes for ${trials.length * STEPS.length} steps; most sends of any one write: ${Math.max(...trials.map((t) => t.maxPerWrite))}); every repair ${allVerified ? 'finished with all four steps verified' : 'did NOT finish verified: see the table'}.`,
    `Redis back → repair done: median ${ms(recovery.median)}, min ${ms(recovery.min)}, max ${ms(recovery.max)}; of it, Redis back → the new run's "Resuming" post: median ${ms(takeover.median)},`,
    `min ${ms(takeover.min)}, max ${ms(takeover.max)} (the workers' reconnect, ioredis backing off up to 5 s, then the stalled check handing the job out again, up to two stalled`,
    `intervals); the rest is the steps still to run at ${ms(MAAS_LATENCY_MS)} per MAAS request. With the production settings (60 s lock, 15 s stalled interval) an outage`,
    'shorter than the lock causes no takeover at all; a longer one waits up to 30 s more for the stalled checks. A trial without a "Resuming" post lost Redis before',
    'the run had begun its journal (during the re-measure): the run that took over measured again and ran the plan from the start.',
  ].join('\n');
  process.stdout.write(`${text}\n`);
  writeResultsSection('## exactly once under a Redis outage', text);
  process.exit(perStep === 1 && allVerified ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
