/**
 * mac-diff at scale: 1,000 virsh machines on 20 VM hosts, 20 ms round trip to MAAS and to each
 * host. The bot's job against the runbook followed literally by a script (per machine: an
 * interfaces read, a power-parameters read, one `ssh host virsh domiflist <domain>`, in sequence).
 *
 *   node --import tsx bench/mac-diff.ts
 *
 * Writes (or replaces) the `## mac-diff` section of bench/RESULTS.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeResultsSection } from './lib/results-md.ts';
import os from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { runCheck } from '../src/features/run-check.ts';
import { macDiffCheck } from '../src/features/macs/index.ts';
import type { JobContext } from '../src/engine/job-types.ts';
import type { Adapters } from '../src/adapters/adapters.ts';
import { parseConfigText, type Config } from '../src/core/config.ts';
import { silentLogger } from '../src/core/log.ts';
import { createMaasClient } from '../src/adapters/maas/client.ts';
import { createSshConnector } from '../src/adapters/ssh/connector.ts';
import { sh } from '../src/adapters/ssh/shell-quote.ts';
import { vmHostTarget } from '../src/adapters/ssh/targets.ts';
import type { SshSession } from '../src/adapters/ssh/types.ts';
import { classifyDomiflist } from '../src/adapters/ssh/virsh.ts';
import { normaliseMac } from '../src/core/mac.ts';
import type { BenchWorld, LabMessage, LabRequest } from './mac-diff-lab.ts';

const WORLD: BenchWorld = { machines: 1000, hosts: 20, rttMs: 20, driftEvery: 3 };
const BOT_RUNS = 5;
const BASELINE_SAMPLE = 100;
const COMMAND = 'node --import tsx bench/mac-diff.ts';

interface Counts {
  maasRequests: number;
  sshConnections: number;
  sshCommands: number;
}

class Lab {
  private constructor(
    private readonly child: ChildProcess,
    readonly ready: Extract<LabMessage, { type: 'ready' }>,
  ) {}

  static async start(world: BenchWorld): Promise<Lab> {
    const child = fork(fileURLToPath(new URL('./mac-diff-lab.ts', import.meta.url)), [JSON.stringify(world)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const ready = await new Promise<LabMessage>((resolve, reject) => {
      child.once('message', (m: LabMessage) => resolve(m));
      child.once('exit', (code) => reject(new Error(`the lab exited with ${code}`)));
    });
    if (ready.type !== 'ready') throw new Error('the lab did not start');
    return new Lab(child, ready);
  }

  counts(): Promise<Counts> {
    return new Promise((resolve) => {
      this.child.once('message', (m: LabMessage) => {
        if (m.type === 'counts') resolve(m);
      });
      this.child.send({ type: 'counts' } satisfies LabRequest);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.send({ type: 'close' } satisfies LabRequest);
    });
  }
}

const diff = (a: Counts, b: Counts): Counts => ({
  maasRequests: b.maasRequests - a.maasRequests,
  sshConnections: b.sshConnections - a.sshConnections,
  sshCommands: b.sshCommands - a.sshCommands,
});

function workerContext(lab: Lab): { ctx: JobContext; config: Config; adapters: Adapters } {
  const { config } = parseConfigText(lab.ready.configText, { path: 'bench.yaml', env: lab.ready.env });
  const maasClient = createMaasClient(config.maas['region-a'] as Config['maas'][string]);
  const adapters: Adapters = {
    maas: () => maasClient,
    kube: () => {
      throw new Error('no kube in this benchmark');
    },
    ssh: createSshConnector(),
  };
  return { ctx: { config, adapters, log: silentLogger() }, config, adapters };
}

/** The bot: the job's own gather + check for the site, as a worker runs it. */
async function runBot(lab: Lab, ctx: JobContext): Promise<{ ms: number; counts: Counts; drifted: string }> {
  const before = await lab.counts();
  const started = performance.now();
  const [report] = await runCheck(ctx, macDiffCheck, 'bench');
  const ms = performance.now() - started;
  return { ms, counts: diff(before, await lab.counts()), drifted: report?.verdict ?? 'no report' };
}

/**
 * The runbook, literally, for `sample` machines: `maas machines read zone=…` once, then per machine
 * `maas <id> interfaces read`, its power parameters, and `ssh host virsh domiflist <domain>`.
 */
async function runBaseline(lab: Lab, config: Config, adapters: Adapters, sample: number, reuse: boolean): Promise<{ ms: number; counts: Counts }> {
  const site = config.sites.bench;
  if (!site) throw new Error('no bench site');
  const maas = adapters.maas('region-a');
  const before = await lab.counts();
  const started = performance.now();
  const sessions = new Map<string, SshSession>();
  const machines = (await maas.listMachines({ zone: 'bench' })).slice(0, sample);
  let drifted = 0;
  for (const m of machines) {
    const interfaces = await maas.listInterfaces(m.system_id);
    const power = (await maas.powerParameters([m.system_id]))[m.system_id];
    const address = new URL(String(power?.power_address)).hostname;
    let session = sessions.get(address);
    if (!session) {
      session = await adapters.ssh.connect(vmHostTarget(site, address, 'ops'));
      if (reuse) sessions.set(address, session);
    }
    const out = await session.exec(sh`virsh --connect qemu:///system domiflist ${String(power?.power_id)}`);
    if (!reuse) session.close();
    const probe = classifyDomiflist(out.stdout + out.stderr, out.code);
    const live = probe.kind === 'found' ? probe.nics.map((n) => n.mac) : [];
    if (interfaces.some((i) => !(live as string[]).includes(normaliseMac(i.mac_address) ?? i.mac_address))) drifted++;
  }
  for (const s of sessions.values()) s.close();
  const ms = performance.now() - started;
  if (drifted === 0) throw new Error('the baseline found no drift: it is not doing the work');
  return { ms, counts: diff(before, await lab.counts()) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const mark = (met: boolean, text: string) => `${met ? 'met' : 'MISSED'}: ${text}`;
const fmt = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const lab = await Lab.start(WORLD);
  try {
    const { ctx, config, adapters } = workerContext(lab);
    let heapPeak = 0;
    const sampler = setInterval(() => {
      heapPeak = Math.max(heapPeak, getHeapStatistics().used_heap_size);
    }, 2);

    await runBot(lab, ctx); // warm-up: module JIT, MAAS keep-alive connection
    const bot: Awaited<ReturnType<typeof runBot>>[] = [];
    for (let i = 0; i < BOT_RUNS; i++) bot.push(await runBot(lab, ctx));
    clearInterval(sampler);
    const rssPeak = process.resourceUsage().maxRSS * 1024;

    const baselineNew = await runBaseline(lab, config, adapters, BASELINE_SAMPLE, false);
    const baselineReuse = await runBaseline(lab, config, adapters, BASELINE_SAMPLE, true);
    const scale = WORLD.machines / BASELINE_SAMPLE;
    const projectedNew = baselineNew.ms * scale;
    const projectedReuse = baselineReuse.ms * scale;

    const botMs = median(bot.map((b) => b.ms));
    const counts = bot[bot.length - 1]?.counts as Counts;
    const lines = [
      `## mac-diff`,
      '',
      `Reproduce: \`${COMMAND}\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${os.cpus().length} CPUs).`,
      '',
      `World: ${WORLD.machines} virsh machines on ${WORLD.hosts} VM hosts (one MAAS zone), a MAC drifted on every ${WORLD.driftEvery}rd machine;`,
      `MAAS simulator and the 20 ssh2 VM hosts in a separate process; ${WORLD.rttMs} ms added per MAAS request and ${WORLD.rttMs} ms round trip on every`,
      `SSH connection (a TCP proxy in front of each host, also charging one round trip for the TCP handshake).`,
      '',
      '| run | wall time | MAAS requests | SSH connections | SSH commands |',
      '| --- | ---: | ---: | ---: | ---: |',
      `| bot (\`mac-diff\` job, median of ${BOT_RUNS} after a warm-up; min ${fmt(Math.min(...bot.map((b) => b.ms)))}) | ${fmt(botMs)} | ${counts.maasRequests} | ${counts.sshConnections} | ${counts.sshCommands} |`,
      `| runbook script, new SSH connection per machine: measured on ${BASELINE_SAMPLE} machines | ${fmt(baselineNew.ms)} | ${baselineNew.counts.maasRequests} | ${baselineNew.counts.sshConnections} | ${baselineNew.counts.sshCommands} |`,
      `| ↳ extrapolated ×${scale} to ${WORLD.machines} machines | ${fmt(projectedNew)} | ${1 + 2 * WORLD.machines} | ${WORLD.machines} | ${WORLD.machines} |`,
      `| runbook script, one SSH connection reused per host: measured on ${BASELINE_SAMPLE} machines | ${fmt(baselineReuse.ms)} | ${baselineReuse.counts.maasRequests} | ${baselineReuse.counts.sshConnections} | ${baselineReuse.counts.sshCommands} |`,
      `| ↳ extrapolated ×${scale} to ${WORLD.machines} machines | ${fmt(projectedReuse)} | ${1 + 2 * WORLD.machines} | ${WORLD.hosts} | ${WORLD.machines} |`,
      '',
      `Speed-up of the bot: ${(projectedNew / botMs).toFixed(0)}× against the literal runbook (new connection per machine), ${(projectedReuse / botMs).toFixed(0)}× against the runbook with connections reused.`,
      `Worker process (the bot side only; the simulators run in another process): peak RSS ${mb(rssPeak)}, peak V8 heap used ${mb(heapPeak)} (sampled every 2 ms during the bot runs).`,
      `Bot verdict: "${bot[bot.length - 1]?.drifted}".`,
      '',
      `Targets: ${[
        mark(counts.maasRequests <= 3, `≤ 3 MAAS requests (${counts.maasRequests})`),
        mark(counts.sshConnections === WORLD.hosts && counts.sshCommands === WORLD.hosts, `one SSH connection and one command per host (${counts.sshConnections}/${counts.sshCommands} for ${WORLD.hosts} hosts)`),
        mark(projectedReuse / botMs >= 30, `≥ 30× the baseline (${(projectedReuse / botMs).toFixed(0)}× even against reused connections)`),
        mark(botMs < 1000, `under 1 s (${fmt(botMs)})`),
        mark(rssPeak < 250 * 1024 * 1024, `peak memory < 250 MB (${mb(rssPeak)})`),
      ].join('; ')}.`,
      `Load average while running: ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} CPUs (the 20 simulated hosts' ${WORLD.machines} virsh processes share these CPUs with the worker).`,
      '',
    ];
    const text = lines.join('\n');
    console.log(text);
    writeResultsSection('## mac-diff', text.replace(/^## mac-diff\n+/, ''));
  } finally {
    await lab.close();
  }
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
