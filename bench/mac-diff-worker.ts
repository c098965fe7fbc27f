/**
 * One worker of the mac-diff benchmark, in its own process so that its peak RSS is its own: the
 * bot's mac-diff job with streamed MAAS lists (`stream`), the same job with the whole-body parse
 * (`whole`), the runbook followed literally (`runbook-new`, `runbook-reuse`), or `mac-diff all`
 * (`all`). Reports its figures over the fork IPC channel to bench/mac-diff.ts.
 */
import { getHeapStatistics } from 'node:v8';
import type { Adapters } from '../src/adapters/adapters.ts';
import { createMaasClient } from '../src/adapters/maas/client.ts';
import type { MaasClient } from '../src/adapters/maas/types.ts';
import { createSshConnector } from '../src/adapters/ssh/connector.ts';
import { sh } from '../src/adapters/ssh/shell-quote.ts';
import { vmHostTarget } from '../src/adapters/ssh/targets.ts';
import type { SshSession } from '../src/adapters/ssh/types.ts';
import { classifyDomiflist } from '../src/adapters/ssh/virsh.ts';
import { parseConfigText, type Config } from '../src/core/config.ts';
import { silentLogger } from '../src/core/log.ts';
import { normaliseMac } from '../src/core/mac.ts';
import type { Report } from '../src/core/report.ts';
import { renderSummary } from '../src/edge/slack/all-summary.ts';
import { checkMessage } from '../src/edge/slack/message-limits.ts';
import type { JobContext } from '../src/engine/job-types.ts';
import { macDiffCheck } from '../src/features/macs/index.ts';
import { runCheck } from '../src/features/run-check.ts';
import { wholeBodyMaasClient } from './lib/whole-body-maas.ts';

export type WorkerMode = 'stream' | 'whole' | 'runbook-new' | 'runbook-reuse' | 'all';

export interface WorkerJob {
  mode: WorkerMode;
  configText: string;
  env: Record<string, string>;
  /** The site of the single-site modes. */
  site: string;
  /** Measured runs after one warm-up (single-site modes). */
  runs: number;
  /** Machines the runbook modes walk through. */
  sample?: number;
}

export interface WorkerRun {
  ms: number;
  maasRequests: number;
  maasBytes: number;
  verdict: string;
}

export interface WorkerResult {
  type: 'result';
  runs: WorkerRun[];
  rssPeak: number;
  heapPeak: number;
  /** `all`: the Slack answer and how it measured against the limits. */
  slack?: { blocks: number; textChars: number; jsonBytes: number; problem: string | null; fileAttached: boolean; reports: number };
}

interface Counter {
  requests: number;
  bytes: number;
}

function contextFor(job: WorkerJob, counter: Counter): JobContext {
  const { config } = parseConfigText(job.configText, { path: 'bench.yaml', env: job.env });
  const region = config.maas['region-a'] as Config['maas'][string];
  // MAAS (and the simulator) render a list whole before the first byte: 10,000 machines take longer than the default 10 s.
  const streamed = createMaasClient(region, {
    timeoutMs: 180_000,
    onRequest: (info) => {
      counter.requests += 1;
      counter.bytes += info.bytes ?? 0;
    },
  });
  const wholeAnswer = (bytes: number) => {
    counter.requests += 1;
    counter.bytes += bytes;
  };
  const maas: MaasClient = job.mode === 'whole' ? wholeBodyMaasClient(region, streamed, wholeAnswer) : streamed;
  const adapters: Adapters = {
    maas: () => maas,
    kube: () => {
      throw new Error('no kube in this benchmark');
    },
    ssh: createSshConnector(),
  };
  return { config, adapters, log: silentLogger() };
}

async function measured(counter: Counter, run: () => Promise<string>): Promise<WorkerRun> {
  const before = { ...counter };
  const started = performance.now();
  const verdict = await run();
  return { ms: performance.now() - started, maasRequests: counter.requests - before.requests, maasBytes: counter.bytes - before.bytes, verdict };
}

async function botRun(ctx: JobContext, site: string): Promise<string> {
  const [report] = await runCheck(ctx, macDiffCheck, site);
  return report?.verdict ?? 'no report';
}

/**
 * The runbook, literally, for `sample` machines: `maas machines read zone=…` once, then per machine
 * `maas <id> interfaces read`, its power parameters, and `ssh host virsh domiflist <domain>`.
 */
async function runbookRun(ctx: JobContext, siteName: string, sample: number, reuse: boolean): Promise<string> {
  const site = ctx.config.sites[siteName];
  if (!site) throw new Error(`no site ${siteName}`);
  const maas = ctx.adapters.maas(site.maas);
  const sessions = new Map<string, SshSession>();
  const machines = (await maas.listMachines({ zone: site.machines.zone ?? siteName })).slice(0, sample);
  let drifted = 0;
  for (const m of machines) {
    const interfaces = await maas.listInterfaces(m.system_id);
    const power = (await maas.powerParameters([m.system_id]))[m.system_id];
    const address = new URL(String(power?.power_address)).hostname;
    let session = sessions.get(address);
    if (!session) {
      session = await ctx.adapters.ssh.connect(vmHostTarget(site, address, 'ops'));
      if (reuse) sessions.set(address, session);
    }
    const out = await session.exec(sh`virsh --connect qemu:///system domiflist ${String(power?.power_id)}`);
    if (!reuse) session.close();
    const probe = classifyDomiflist(out.stdout + out.stderr, out.code);
    const live = probe.kind === 'found' ? probe.nics.map((n) => n.mac) : [];
    if (interfaces.some((i) => !(live as string[]).includes(normaliseMac(i.mac_address) ?? i.mac_address))) drifted++;
  }
  for (const s of sessions.values()) s.close();
  if (drifted === 0) throw new Error('the runbook found no drift: it is not doing the work');
  return `${drifted} of ${machines.length} drifted`;
}

function slackFigures(reports: Report[]): NonNullable<WorkerResult['slack']> {
  const summary = renderSummary(reports);
  const { blocks, text } = summary.message as { blocks?: unknown[]; text?: string };
  const blockText = JSON.stringify(blocks ?? []).length;
  return {
    blocks: blocks?.length ?? 0,
    textChars: (text ?? '').length,
    jsonBytes: blockText,
    problem: checkMessage(summary.message) ?? null,
    fileAttached: summary.file !== undefined,
    reports: reports.length,
  };
}

async function main(): Promise<void> {
  const job = await new Promise<WorkerJob>((resolve) => process.once('message', (m: WorkerJob) => resolve(m)));
  const counter: Counter = { requests: 0, bytes: 0 };
  const ctx = contextFor(job, counter);
  let heapPeak = 0;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, getHeapStatistics().used_heap_size);
  }, 2);
  const runs: WorkerRun[] = [];
  let slack: WorkerResult['slack'];
  if (job.mode === 'all') {
    let reports: Report[] = [];
    runs.push(
      await measured(counter, async () => {
        reports = await runCheck(ctx, macDiffCheck, 'all');
        return `${reports.filter((r) => r.status !== 'ok').length} of ${reports.length} sites need attention`;
      }),
    );
    slack = slackFigures(reports);
  } else if (job.mode === 'runbook-new' || job.mode === 'runbook-reuse') {
    runs.push(await measured(counter, () => runbookRun(ctx, job.site, job.sample ?? 100, job.mode === 'runbook-reuse')));
  } else {
    await botRun(ctx, job.site); // warm-up: module JIT, MAAS keep-alive connection
    for (let i = 0; i < job.runs; i++) runs.push(await measured(counter, () => botRun(ctx, job.site)));
  }
  clearInterval(sampler);
  const result: WorkerResult = { type: 'result', runs, rssPeak: process.resourceUsage().maxRSS * 1024, heapPeak, ...(slack ? { slack } : {}) };
  process.send?.(result, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
