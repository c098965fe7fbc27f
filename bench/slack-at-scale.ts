/**
 * Slack at incident scale.
 *
 * 1. The largest payload the bot builds over generated worlds (1–1,000 machines, 1–200 targets,
 *    long and hostile names, every finding code): blocks, block text and JSON bytes of every
 *    check result, `all` answer, plan (every state) and alert, against Slack's limits. Side by
 *    side, the baseline: an `all` answer as one message of every target (the answer before the
 *    summary), measured with the same renderer.
 * 2. The time from `/maas resolver-check all` over 100 failing sites (one simulated rack that
 *    answers SERVFAIL, reached over SSH per site) to the summary posted: the real Bolt app over
 *    signed HTTP, Redis, a worker, the Slack emulator. Side by side, one site alone.
 *
 *   node --import tsx bench/slack-at-scale.ts
 *
 * Env: REDIS_URL (default redis://127.0.0.1:6379; loopback only).
 * Writes (or replaces) the `## Slack at incident scale` section of bench/RESULTS.md.
 */
import { stringify } from 'yaml';
import { renderAlert } from '../src/edge/alerts/alert-message.ts';
import { parseConfigText } from '../src/core/config.ts';
import { startLabRack, type LabRack } from '../lab/rack-sim/lab-rack.ts';
import { startSlackEmulator, type SlackEmulator } from '../lab/slack-emulator/index.ts';
import { generateKeyPair } from '../lab/ssh-sim/keys.ts';
import { silentLogger } from '../src/core/log.ts';
import { startRuntime, type Runtime } from '../src/main.ts';
import type { Report } from '../src/core/report.ts';
import { renderSummary } from '../src/edge/slack/all-summary.ts';
import { checkMessage } from '../src/edge/slack/message-limits.ts';
import { renderPlanMessage } from '../src/edge/slack/plan-render.ts';
import { renderReport, renderReports } from '../src/edge/slack/render.ts';
import { generateWorld } from '../test/helpers/report-worlds.ts';
import { machineContext, ms, writeResultsSection } from './lib/results-md.ts';

const COMMAND = 'node --import tsx bench/slack-at-scale.ts';
const SEEDS = 200;
const SITES = 100;
const RUNS = 3;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const log = (line: string) => process.stderr.write(`[slack-at-scale] ${line}\n`);

type Payload = { text: string; blocks?: unknown[] };
interface Largest {
  blocks: number;
  blockText: number;
  bytes: number;
  refused: number;
  payloads: number;
}

function blockText(blocks: unknown[] = []): number {
  let n = 0;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if ((o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string') n += o.text.length;
      else Object.values(o).forEach(walk);
    }
  };
  walk(blocks);
  return n;
}

function measure(into: Largest, p: Payload): void {
  into.payloads += 1;
  into.blocks = Math.max(into.blocks, p.blocks?.length ?? 0);
  into.blockText = Math.max(into.blockText, blockText(p.blocks));
  into.bytes = Math.max(into.bytes, JSON.stringify(p).length);
  if (checkMessage(p)) into.refused += 1;
}

function payloadSizes(): { bot: Largest; baseline: Largest; worlds: number } {
  const bot: Largest = { blocks: 0, blockText: 0, bytes: 0, refused: 0, payloads: 0 };
  const baseline: Largest = { ...bot };
  const shapes = [{ targets: 200, machines: 1000 }, { targets: 1, machines: 1000 }, { targets: 100, machines: 100 }];
  const worlds = [...Array.from({ length: SEEDS }, (_, i) => generateWorld(5000 + i)), ...shapes.map((s, i) => generateWorld(9000 + i, s))];
  for (const world of worlds) {
    const reports = world.reports;
    measure(bot, reports.length > 1 ? renderSummary(reports).message : renderReport(reports[0]!));
    measure(baseline, renderReports(reports));
    for (const r of reports.slice(0, 20)) {
      measure(bot, renderReport(r));
      if (r.plan) measure(bot, renderPlanMessage({ planId: r.plan.id, report: r, state: r.results ? 'done' : 'pending', requester: 'U1', expiresAt: 0, approvable: true }));
      measure(bot, renderAlert(alertOf(r), Date.UTC(2026, 10, 30, 5)));
    }
  }
  return { bot, baseline, worlds: worlds.length };
}

function alertOf(r: Report) {
  return { id: 'a', check: r.kind, target: r.target, kind: 'drift' as const, state: 'open' as const, openedAt: 0, lastSeenAt: 0, reopened: 0, status: r.status, verdict: r.verdict, findings: r.findings, members: [] };
}

interface Stack {
  emulator: SlackEmulator;
  runtime: Runtime;
  rack: LabRack;
  appUrl: string;
  close(): Promise<void>;
}

async function startStack(): Promise<Stack> {
  const key = generateKeyPair('slack-at-scale');
  const rack = await startLabRack({ mode: 'servfail', authorizedKey: key.publicKey });
  const emulator = await startSlackEmulator({ channels: ['C0OPS'] });
  const sites: Record<string, unknown> = {};
  for (let i = 0; i < SITES; i++) sites[`site-${String(i).padStart(3, '0')}`] = { maas: 'region-a', rack: rack.rackConfig('env:BENCH_SSH_KEY') };
  const text = stringify({ slack: { commandChannels: ['C0OPS'], operators: ['U0OPS1'] }, maas: { 'region-a': { url: 'http://127.0.0.1:1/MAAS', apiKey: 'env:BENCH_MAAS_KEY' } }, sites });
  const env = { BENCH_SSH_KEY: key.privateKey, BENCH_MAAS_KEY: 'ckey0123456789abcd:tkey0123456789abcd:tsecret0123456789ab' };
  const loaded = parseConfigText(text, { path: 'bench.yaml', env });
  const runtime = await startRuntime({
    role: 'serve',
    loaded,
    env: { ...env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, SLACK_MODE: 'http', PORT: '0', REDIS_URL },
    prefix: `bench-slack-${process.pid}`,
    host: '127.0.0.1',
    log: silentLogger(),
  });
  return {
    emulator,
    runtime,
    rack,
    appUrl: `http://127.0.0.1:${runtime.port}`,
    close: async () => {
      await runtime.close();
      await emulator.close();
      await rack.close();
    },
  };
}

/** From the slash command sent to the result (the summary for `all`) posted with chat.postMessage. */
async function timeToResult(stack: Stack, target: string): Promise<{ ms: number; threadReplies: number }> {
  const sentAt = Date.now();
  const before = stack.emulator.messages.length;
  await stack.emulator.sendSlashCommand({ appUrl: stack.appUrl, text: `resolver-check ${target}`, user: 'U0OPS1', channel: 'C0OPS' });
  const result = await stack.emulator.waitFor((e) => e.messages.slice(before).find((m) => m.via === 'chat.postMessage' && !m.threadTs), { timeoutMs: 120_000, description: `the result of resolver-check ${target}` });
  return { ms: result.at - sentAt, threadReplies: stack.emulator.messages.filter((m) => m.threadTs === result.ts).length };
}

async function main(): Promise<void> {
  log('rendering generated worlds');
  const sizes = payloadSizes();
  log(`largest payload: ${sizes.bot.blocks} blocks, ${sizes.bot.blockText} characters of block text (${sizes.bot.refused} refused)`);

  log(`starting the stack: ${SITES} sites on one SERVFAIL rack`);
  const stack = await startStack();
  const all: number[] = [];
  const one: number[] = [];
  let summaryText = '';
  try {
    await timeToResult(stack, 'site-000'); // warm-up: SSH keys, first connections
    for (let run = 0; run < RUNS; run++) {
      one.push((await timeToResult(stack, 'site-001')).ms);
      const r = await timeToResult(stack, 'all');
      all.push(r.ms);
      summaryText = stack.emulator.messages.filter((m) => m.via === 'chat.postMessage' && !m.threadTs).at(-1)?.text ?? '';
      // Let the paced thread finish before the next run (about one reply a second).
      await stack.emulator.waitFor((e) => e.messages.filter((m) => m.threadTs && m.threadTs === e.messages.filter((x) => x.via === 'chat.postMessage' && !x.threadTs).at(-1)?.ts).length >= SITES, { timeoutMs: 200_000, intervalMs: 200, description: 'the paced thread' });
    }
  } finally {
    await stack.close();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const body = [
    `Reproduce: \`${COMMAND}\` (${machineContext()}).`,
    '',
    `### Largest payload over ${sizes.worlds} generated worlds (1–1,000 machines, 1–200 targets, every finding code)`,
    '',
    '| payloads | largest: blocks | block text (characters) | JSON bytes | refused by the limit check |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| bot: results, \`all\` summaries, plans, alerts (${sizes.bot.payloads}) | ${sizes.bot.blocks} | ${sizes.bot.blockText} | ${sizes.bot.bytes} | ${sizes.bot.refused} |`,
    `| baseline: every target of an \`all\` in one message (${sizes.baseline.payloads}) | ${sizes.baseline.blocks} | ${sizes.baseline.blockText} | ${sizes.baseline.bytes} | ${sizes.baseline.refused} |`,
    '',
    'Limits: 50 blocks, about 13,000 characters of block text (msg_blocks_too_long), 40,000 of text (src/edge/slack/message-limits.ts).',
    '',
    `### /maas resolver-check all over ${SITES} failing sites → summary posted`,
    '',
    'Real Bolt app over signed HTTP, Redis, one worker, the Slack emulator; every site\'s rack reached over SSH (one simulated rack answering SERVFAIL).',
    '',
    '| command | median of 3 | runs |',
    '| --- | ---: | --- |',
    `| \`resolver-check all\` (${SITES} sites): summary posted | ${ms(median(all))} | ${all.map(ms).join(', ')} |`,
    `| \`resolver-check site-001\` alone (baseline): result posted | ${ms(median(one))} | ${one.map(ms).join(', ')} |`,
    '',
    `Summary: "${summaryText}". The ${SITES} details follow in its thread, paced at about one reply a second (Slack's per-channel rate).`,
  ].join('\n');
  writeResultsSection('## Slack at incident scale', body);
  process.stdout.write(`${body}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
    process.exit(1);
  },
);
