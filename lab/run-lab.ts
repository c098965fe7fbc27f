import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describeError } from '../src/core/errors.ts';
import { createLogger } from '../src/core/log.ts';
import { postWebhook } from './alertmanager-webhook.ts';
import { labScript, type LabAlertmanagerStep, type LabClickStep, type LabCommandStep, type LabStep, type LabWorldStep } from './lab-script.ts';
import { LAB_SLACK_PACING, startLabBot, type LabBot } from './lab-bot.ts';
import { LAB_CHANNELS, LAB_USERS, type LabWorld } from './lab-world.ts';
import { findOrStartRedis, type RedisHandle } from './private-redis.ts';
import { deletePrefix } from './redis-keys.ts';
import { type SlackEmulator } from './slack-emulator/index.ts';
import { renderTranscript, type TranscriptNames } from './transcript.ts';

const NAMES: TranscriptNames = {
  users: { [LAB_USERS.operator]: 'alice (on call)', [LAB_USERS.approver]: 'bob (approver)' },
  bot: 'maas-bot',
  channels: { [LAB_CHANNELS.ops]: '#ops', [LAB_CHANNELS.alerts]: '#alerts' },
  mainChannel: [LAB_CHANNELS.ops],
};
const STEP_TIMEOUT_MS = 30_000;

interface LabIo {
  env: NodeJS.ProcessEnv;
  out: (s: string) => void;
  err: (s: string) => void;
  /** Runs only the script's first steps (a test that needs the lab started, not its whole story). */
  stepLimit?: number;
}

interface LabSession {
  emulator: SlackEmulator;
  appUrl: string;
  world: LabWorld;
}

/** What a step prints around its transcript: `lead` before it, `measured` after it. */
interface StepLines {
  lead?: string;
  measured?: string;
}

function lastSeq(emulator: SlackEmulator): number {
  // Edits too: an edit printed with one step is not printed again with the next.
  const seqs = [...emulator.messages.flatMap((m) => [m.seq, ...m.updates.map((u) => u.seq)]), ...emulator.invocations.map((i) => i.seq)];
  return seqs.length ? Math.max(...seqs) : 0;
}

/** Waits until `count` stops changing for a moment (a scan of several checks posts in turns), bounded. */
async function settle(count: () => number, quietMs = 600, maxMs = 10_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = count();
  let stableSince = Date.now();
  while (Date.now() < deadline && Date.now() - stableSince < quietMs) {
    await new Promise((r) => setTimeout(r, 100));
    const now = count();
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    }
  }
}

/** Posts, updates and thread lines in the alert channel so far. */
function alertActivity(emulator: SlackEmulator): number {
  return emulator.channelMessages(LAB_CHANNELS.alerts).reduce((n, m) => n + 1 + m.updates.length, 0);
}

async function runCommandStep(s: LabSession, step: LabCommandStep): Promise<void> {
  const before = alertActivity(s.emulator);
  const sent = await s.emulator.sendSlashCommand({ appUrl: s.appUrl, text: step.text, user: LAB_USERS[step.user], channel: LAB_CHANNELS.ops });
  const startSeq = s.emulator.invocations.at(-1)?.seq ?? 0;
  await s.emulator.waitFor((e) => e.answersTo(sent.responseUrl).length > 0, { timeoutMs: STEP_TIMEOUT_MS, description: `an answer to /maas ${step.text}` });
  if (step.expect === 'alert') {
    await s.emulator.waitFor((e) => alertActivity(e) > before, { timeoutMs: STEP_TIMEOUT_MS, description: `the alert channel after /maas ${step.text}` });
    // Alerts go through the paced sender (about one call a second per channel).
    await settle(() => alertActivity(s.emulator), 1_600);
  }
  if (step.expect === 'report') {
    // The result edits the command's "running" answer (or, where it cannot, is a new post).
    const resultShown = (e: SlackEmulator) => e.resultsIn(LAB_CHANNELS.ops).some((m) => (m.updates.at(-1)?.seq ?? m.seq) > startSeq);
    await s.emulator.waitFor(resultShown, {
      timeoutMs: STEP_TIMEOUT_MS,
      description: `the result of /maas ${step.text}`,
    });
    // The thread and files follow the result under Slack's pacing: a post a second per channel.
    const quietMs = LAB_SLACK_PACING.postGapMs + 600;
    await settle(() => s.emulator.channelMessages(LAB_CHANNELS.ops).reduce((n, m) => n + 1 + m.updates.length, 0), quietMs);
  }
}

function findButton(s: LabSession, label: string): { messageTs: string; actionId: string; value?: string } | undefined {
  const messages = [...s.emulator.channelMessages(LAB_CHANNELS.ops)].reverse();
  for (const m of messages) {
    for (const block of (m.blocks ?? []) as { type: string; elements?: { type: string; action_id?: string; value?: string; text?: { text?: string } }[] }[]) {
      if (block.type !== 'actions') continue;
      const button = block.elements?.find((e) => e.type === 'button' && e.text?.text?.startsWith(label));
      if (button?.action_id) return { messageTs: m.ts, actionId: button.action_id, ...(button.value ? { value: button.value } : {}) };
    }
  }
  return undefined;
}

async function runClickStep(s: LabSession, step: LabClickStep): Promise<void> {
  const button = findButton(s, step.button);
  if (!button) throw new Error(`no "${step.button}" button in the channel`);
  const before = s.emulator.messages.length;
  await s.emulator.clickButton({ appUrl: s.appUrl, ...button, user: LAB_USERS[step.user], channel: LAB_CHANNELS.ops });
  await s.emulator.waitFor((e) => e.messages.length >= before + step.expectMessages, { timeoutMs: STEP_TIMEOUT_MS, description: `${step.expectMessages} answer(s) to the click` });
  // An approved repair re-runs its check, and the alert it answers is edited through the paced sender
  // (about one call a second): wait for that too, so the edit is counted with this click.
  await settle(() => s.emulator.messages.reduce((n, m) => n + 1 + m.updates.length, 0), 1_600);
}

/** Nobody types: the world changes and the alert channel must change by itself. Says how long it took. */
async function runWorldStep(s: LabSession, step: LabWorldStep): Promise<string> {
  const before = alertActivity(s.emulator);
  const started = performance.now();
  step.happen(s.world);
  await s.emulator.waitFor((e) => alertActivity(e) > before, { timeoutMs: STEP_TIMEOUT_MS, description: `the alert channel after: ${step.measured}` });
  const seconds = (performance.now() - started) / 1000;
  await settle(() => alertActivity(s.emulator), 1_600);
  return `⏱ ${step.measured} ${seconds.toFixed(1)} s after it happened (no command typed)`;
}

/** Alertmanager notifies: the webhook is POSTed and the alert channel must answer (a post or a thread reply). */
async function runAlertmanagerStep(s: LabSession, step: LabAlertmanagerStep, fromSeq: number): Promise<StepLines> {
  const { webhook } = step;
  const before = alertActivity(s.emulator);
  const res = await postWebhook(s.appUrl, s.world.alertmanagerToken, webhook);
  const labels = webhook.alerts.map((a) => Object.entries(a.labels).map(([k, v]) => `${k}=${v}`).join(' ')).join('; ');
  const lead = `Alertmanager: POST /alertmanager (webhook v4, ${webhook.status}: ${labels}; group ${webhook.groupKey}) → ${res.status} ${JSON.stringify(res.body)}`;
  if (res.status !== 200) throw new Error(`${lead}: the bot refused the webhook`);
  await s.emulator.waitFor((e) => alertActivity(e) > before, { timeoutMs: STEP_TIMEOUT_MS, description: `the alert channel after Alertmanager's ${webhook.status} webhook` });
  await settle(() => alertActivity(s.emulator), 1_600);
  if (webhook.status !== 'firing') return { lead };
  const answer = s.emulator.channelMessages(LAB_CHANNELS.alerts).find((m) => m.seq >= fromSeq && m.text.startsWith('Alertmanager '));
  const where = !answer ? 'no answer seen in #alerts' : answer.threadTs ? "answered in the thread of the bot's own open alert for that cluster" : 'answered with a post of its own in #alerts';
  return { lead, measured: `↪ ${where}` };
}

async function runStepKind(s: LabSession, step: LabStep, fromSeq: number): Promise<StepLines> {
  if (step.kind === 'command') await runCommandStep(s, step);
  else if (step.kind === 'click') await runClickStep(s, step);
  else if (step.kind === 'world') return { measured: await runWorldStep(s, step) };
  else return runAlertmanagerStep(s, step, fromSeq);
  return {};
}

async function runStep(s: LabSession, step: LabStep, io: LabIo): Promise<void> {
  const from = lastSeq(s.emulator) + 1;
  if (step.note) io.out(`\n──── ${step.note} ────`);
  let lines: StepLines = {};
  try {
    lines = await runStepKind(s, step, from);
  } catch (err) {
    io.err(`lab: ${describeError(err)}`);
  }
  // Give in-flight posts (thread replies after a result) a moment to land before printing.
  await new Promise((r) => setTimeout(r, 150));
  if (lines.lead) io.out(lines.lead);
  io.out(renderTranscript(s.emulator, NAMES, from));
  if (lines.measured) io.out(lines.measured);
}

/** Where the lab's bot keeps its queues: an observer reads the jobs a step caused. */
export interface LabRedis {
  url: string;
  prefix: string;
}

/** Called (and awaited) after each step with the emulator and the first record seq of that step (bench/message-lengths.ts measures from it). */
export type LabStepObserver = (step: LabStep, index: number, emulator: SlackEmulator, fromSeq: number, redis: LabRedis) => void | Promise<void>;

/** `maas-chatops lab`: simulators, the bot over HTTP, a worker, and a scripted conversation printed as a channel. */
export async function runLab(io: LabIo, observe?: LabStepObserver): Promise<number> {
  const redis: RedisHandle | null = await findOrStartRedis(io.env);
  if (!redis) {
    io.err('The lab needs Redis: install it (apt-get install redis-server) or set REDIS_URL to a running one.');
    return 2;
  }
  let bot: LabBot | undefined;
  const prefix = `maas-chatops-lab-${randomUUID().slice(0, 8)}`;
  try {
    bot = await startLabBot({ redisUrl: redis.url, prefix, log: createLogger({ level: io.env.LOG_LEVEL ?? 'error' }), watchVmHosts: true });
    io.out(`maas-chatops lab: MAAS simulator ${bot.world.maas.url}, Redis ${redis.url}, bot on ${bot.appUrl.replace('http://', '')}`);
    io.out('Channel #ops (alice is on call, bob approves repairs):');
    const session = { emulator: bot.emulator, appUrl: bot.appUrl, world: bot.world };
    for (const [index, step] of labScript.slice(0, io.stepLimit).entries()) {
      const fromSeq = lastSeq(bot.emulator) + 1;
      await runStep(session, step, io);
      await observe?.(step, index, bot.emulator, fromSeq, { url: redis.url, prefix });
    }
    return 0;
  } catch (err) {
    io.err(`lab failed: ${describeError(err)}`);
    return 2;
  } finally {
    await bot?.close();
    await cleanupPrefix(redis.url, prefix);
    await redis.stop();
  }
}

async function cleanupPrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await deletePrefix(client, prefix);
  } catch {
    // The lab's keys are bounded; a leftover is harmless.
  } finally {
    client.disconnect();
  }
}
