import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { startLabBot, type LabBot } from '../../lab/lab-bot.ts';
import { LAB_CHANNELS, LAB_USERS, type LabWorld } from '../../lab/lab-world.ts';
import { type EmulatedMessage, type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { ALERT_ACTIONS } from '../../src/edge/alerts/alert-message.ts';
import { commandForAlertAction } from '../../src/edge/slack/alert-actions.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/** An alert's "Plan fix" and "Re-check now" buttons, clicked in the alert channel of a running bot. */
describe('alert buttons', () => {
  let bot: LabBot;
  let world: LabWorld;
  let emulator: SlackEmulator;
  let appUrl: string;
  const prefix = freshPrefix('alert-buttons');

  beforeAll(async () => {
    bot = await startLabBot({ redisUrl: TEST_REDIS_URL, prefix, log: silentLogger() });
    ({ world, emulator, appUrl } = bot);
    await emulator.sendSlashCommand({ appUrl, text: 'scan site-b mac-diff', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.alerts).find((m) => !m.threadTs), { timeoutMs: 20_000, description: 'the mac-diff alert' });
  });

  afterAll(async () => {
    await bot?.close();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  const alert = () => emulator.channelMessages(LAB_CHANNELS.alerts).find((m) => !m.threadTs) as EmulatedMessage;
  /** The epoch second of the alert's "last checked" date token, as the reader's Slack shows it. */
  const lastChecked = (m: EmulatedMessage) => Number(/last checked <!date\^(\d+)\^/.exec(JSON.stringify(m.blocks))?.[1] ?? NaN);
  const button = (m: EmulatedMessage, actionId: string) =>
    (m.blocks as { type: string; elements?: { action_id: string; value?: string }[] }[]).flatMap((b) => b.elements ?? []).find((e) => e.action_id === actionId);

  it('"Plan fix" posts the fix-macs plan with Approve and Reject in the alert channel', async () => {
    const planFix = button(alert(), ALERT_ACTIONS.planFix);
    expect(planFix?.value).toBe(JSON.stringify({ check: 'mac-diff', target: 'site-b' }));
    const before = Math.max(...emulator.messages.map((m) => m.seq));
    await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.planFix, value: planFix?.value ?? '', user: LAB_USERS.operator, channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    const plan = await emulator.waitFor(
      (e) => e.channelMessages(LAB_CHANNELS.alerts).find((m) => m.seq > before && m.via === 'chat.postMessage' && /plan `[0-9a-f]{16}`/.test(JSON.stringify(m.blocks))),
      { timeoutMs: 20_000, description: 'the plan' },
    );
    expect(plan.text).toMatch(/Plan: update 10 MACs on 9 machines at site-b/);
    expect(JSON.stringify(plan.blocks)).toMatch(/"text":"Approve and run".*"text":"Reject"/);
    expect(world.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);
  });

  it('"Re-check now" runs the scan again: the same alert is edited to show the new check time, not posted twice', async () => {
    const updates = alert().updates.length;
    const checkedBefore = lastChecked(alert());
    const recheck = button(alert(), ALERT_ACTIONS.recheck);
    const clickedAt = Date.now();
    await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.recheck, value: recheck?.value ?? '', user: LAB_USERS.operator, channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    await emulator.waitFor(() => alert().updates.length > updates, { timeoutMs: 20_000, description: 'the alert updated' });
    expect(lastChecked(alert())).toBeGreaterThan(checkedBefore);
    expect(lastChecked(alert())).toBeGreaterThanOrEqual(Math.floor(clickedAt / 1000));
    expect(alert().text).toMatch(/^CRITICAL: .*\(mac-diff site-b\)$/);
    const alertPosts = emulator.channelMessages(LAB_CHANNELS.alerts).filter((m) => !m.threadTs && m.via === 'chat.postMessage' && /mac-diff site-b/.test(JSON.stringify(m.blocks)));
    expect(alertPosts).toHaveLength(1);
  });

  it('a forged value or a user who is not an operator gets an answer and nothing is queued', async () => {
    const forged = await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.planFix, value: JSON.stringify({ check: 'mac-diff', target: 'site-x' }), user: LAB_USERS.operator, channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    const forgedAnswer = await emulator.waitFor((e) => e.answersTo(forged.responseUrl)[0], { timeoutMs: 5_000 });
    expect(forgedAnswer.text).toBe('That button names no configured check or target; nothing was done.');
    const stranger = await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.recheck, value: JSON.stringify({ check: 'mac-diff', target: 'site-b' }), user: 'U0STRANGER', channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    const strangerAnswer = await emulator.waitFor((e) => e.answersTo(stranger.responseUrl)[0], { timeoutMs: 5_000 });
    expect(strangerAnswer.ephemeral).toBe(true);
    expect(strangerAnswer.text).toMatch(/You are not a \/maas operator/);
  });

  it('"Silence 1h" is /maas silence <target> 1h, with its permission checks: an operator silences, a stranger is refused', async () => {
    const silence = button(alert(), ALERT_ACTIONS.silence);
    expect(silence?.value).toBe(JSON.stringify({ check: 'mac-diff', target: 'site-b' }));
    const stranger = await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.silence, value: silence?.value ?? '', user: 'U0STRANGER', channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    const refused = await emulator.waitFor((e) => e.answersTo(stranger.responseUrl)[0], { timeoutMs: 5_000 });
    expect(refused.ephemeral).toBe(true);
    expect(refused.text).toMatch(/You are not a \/maas operator/);
    const operator = await emulator.clickButton({ appUrl, actionId: ALERT_ACTIONS.silence, value: silence?.value ?? '', user: LAB_USERS.operator, channel: LAB_CHANNELS.alerts, messageTs: alert().ts });
    const answer = await emulator.waitFor((e) => e.answersTo(operator.responseUrl)[0], { timeoutMs: 5_000 });
    expect(answer.text).toMatch(/silenced site-b for 1h/);
  });

  it('maps values to commands only for configured checks and targets', () => {
    const { config } = loadConfig({ path: world.configPath, env: world.env });
    expect(commandForAlertAction(ALERT_ACTIONS.planFix, '{"check":"dns-check","target":"prod"}', config)).toBe('fix-dns prod');
    expect(commandForAlertAction(ALERT_ACTIONS.recheck, '{"check":"resolver-check","target":"site-b"}', config)).toBe('scan site-b resolver-check');
    expect(commandForAlertAction(ALERT_ACTIONS.planFix, '{"check":"dns-check","target":"site-b"}', config)).toBeUndefined();
    expect(commandForAlertAction(ALERT_ACTIONS.planFix, '{"check":"__proto__","target":"prod"}', config)).toBeUndefined();
    expect(commandForAlertAction(ALERT_ACTIONS.planFix, 'not json', config)).toBeUndefined();
    expect(commandForAlertAction(ALERT_ACTIONS.silence, '{"check":"mac-diff","target":"site-b"}', config)).toBe('silence site-b 1h');
  });
});
