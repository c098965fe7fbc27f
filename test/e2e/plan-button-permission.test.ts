import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_CHANNELS, LAB_USERS, startLabWorld, type LabWorld } from '../../lab/lab-world.ts';
import { startSlackEmulator, type EmulatedMessage, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { loadConfig } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startRuntime, type Runtime } from '../../src/main.ts';
import { freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';
import { closeLabServe } from '../helpers/close-lab-serve.ts';

/*
 * Issue 31: a check's answer carries a "Plan fix-… <target>" button only for a requester who may
 * run repairs (slack.permissions.repairs). The whole path is real: `maas-chatops serve` (the Bolt
 * app and a worker with the Slack notifier) on the lab's simulated MAAS and cluster, BullMQ on
 * Redis, the Slack emulator. Both lab users are operators; only the approver may repair here.
 */

let world: LabWorld;
let emulator: SlackEmulator;
let runtime: Runtime;
let appUrl = '';
const prefix = freshPrefix('plan-button');

/** The lab's config with the repair permission narrowed to the approver. */
function repairsOnlyForApprover(w: LabWorld): string {
  const config = parse(w.configText) as { slack: Record<string, unknown> };
  config.slack.permissions = { repairs: [LAB_USERS.approver] };
  const path = join(dirname(w.configPath), 'repairs-for-approver.yaml');
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  emulator = await startSlackEmulator({ channels: [LAB_CHANNELS.ops, LAB_CHANNELS.alerts] });
  world = await startLabWorld();
  const loaded = loadConfig({ path: repairsOnlyForApprover(world), env: world.env });
  const env = { ...world.env, SLACK_BOT_TOKEN: emulator.botToken, SLACK_SIGNING_SECRET: emulator.signingSecret, SLACK_API_URL: emulator.apiUrl, SLACK_MODE: 'http', PORT: '0', REDIS_URL: TEST_REDIS_URL };
  runtime = await startRuntime({ role: 'serve', loaded, env, prefix, host: '127.0.0.1', log: silentLogger() });
  appUrl = `http://127.0.0.1:${runtime.port}`;
}, 60_000);

afterAll(() => closeLabServe({ runtime, world, emulator, prefix }));

/** `/maas <text>` typed by `user` in #ops: the check's answer once its result has replaced "running". */
async function answerTo(user: string, text: string): Promise<EmulatedMessage> {
  await emulator.sendSlashCommand({ appUrl, text, user, channel: LAB_CHANNELS.ops });
  const sentSeq = emulator.invocations.at(-1)!.seq;
  const arrived = (m: EmulatedMessage) => m.updates.at(-1)?.seq ?? m.seq;
  return emulator.waitFor((e) => e.resultsIn(LAB_CHANNELS.ops).find((m) => arrived(m) > sentSeq), { timeoutMs: 20_000, description: `the result of /maas ${text}` });
}

/** The buttons of a message as its reader sees them: each button's label. */
function buttonLabels(message: EmulatedMessage): string[] {
  const blocks = (message.blocks ?? []) as { type: string; elements?: { type: string; text?: { text?: string } }[] }[];
  return blocks.filter((b) => b.type === 'actions').flatMap((b) => (b.elements ?? []).filter((e) => e.type === 'button').map((e) => e.text?.text ?? ''));
}

describe("a check's answer with a repairable finding, through the running bot", () => {
  it('carries "Plan fix-dns prod" for a requester who may run repairs (slack.permissions.repairs)', async () => {
    const answer = await answerTo(LAB_USERS.approver, 'dns-check prod');
    expect(answer.text).toMatch(/^CRITICAL: /);
    expect(buttonLabels(answer)).toEqual(['Plan fix-dns prod']);
  });

  it('carries no button at all for an operator who may run checks but not repairs, though the same finding is shown', async () => {
    const answer = await answerTo(LAB_USERS.operator, 'dns-check prod');
    expect(answer.text).toMatch(/^CRITICAL: /);
    expect(JSON.stringify(answer.blocks)).toContain('`DNS_RECORD_EMPTY`');
    expect(buttonLabels(answer)).toEqual([]);
  });
});
