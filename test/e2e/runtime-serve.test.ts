import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { silentLogger } from '../../src/core/log.ts';
import { startLabBot, type LabBot } from '../../lab/lab-bot.ts';
import { LAB_CHANNELS, LAB_USERS, type LabWorld } from '../../lab/lab-world.ts';
import { type SlackEmulator } from '../../lab/slack-emulator/index.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL } from '../helpers/redis.ts';

/** The whole path: signed slash command → Bolt → BullMQ on Redis → worker → simulators → Slack. */
describe('serve: a slash command comes back as a report in the channel', () => {
  let bot: LabBot;
  let world: LabWorld;
  let emulator: SlackEmulator;
  let appUrl: string;
  const prefix = freshPrefix('serve');

  beforeAll(async () => {
    bot = await startLabBot({ redisUrl: TEST_REDIS_URL, prefix, log: silentLogger() });
    ({ world, emulator, appUrl } = bot);
  });

  afterAll(async () => {
    await bot?.close();
    const redis = new Redis(TEST_REDIS_URL);
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  /** One command, one top-level message: its "running" answer, edited into the result. */
  async function command(text: string) {
    const seq = Math.max(0, ...emulator.invocations.map((i) => i.seq), ...emulator.messages.map((m) => m.seq));
    const sent = await emulator.sendSlashCommand({ appUrl, text, user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    expect(sent.status).toBe(200);
    const message = await emulator.waitFor((e) => e.answersTo(sent.responseUrl).find((m) => m.updates.some((u) => u.via === 'chat.update')), {
      timeoutMs: 20_000,
      description: `the result of /maas ${text}`,
    });
    expect(emulator.channelMessages(LAB_CHANNELS.ops).filter((m) => m.seq > seq && !m.threadTs && !m.ephemeral)).toEqual([message]);
    return message;
  }

  it('dns-check on the wiped cluster posts the verdict first and every finding code', async () => {
    const message = await command('dns-check prod');
    expect(message.text).toMatch(/^CRITICAL: API record WIPED, empty-set hash cached/);
    const blocks = JSON.stringify(message.blocks);
    for (const code of ['DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED', 'DNS_CONTROLLER_VULNERABLE']) expect(blocks).toContain(code);
    expect(blocks).toContain('10.11.135.36');
    expect(blocks).toContain('/maas fix-dns prod');
  });

  it('mac-diff reads a site with two MAAS requests (after whoami, asked once per region) and one SSH command per VM host', async () => {
    world.maas.resetCalls();
    const before = world.vmHosts.map((h) => h.ssh.commands.length);
    const message = await command('mac-diff site-b');
    expect(message.text).toMatch(/^CRITICAL: 9 of 12 machines at site-b have drifted MACs/);
    const [whoami, reads] = [world.maas.calls.filter((c) => c.op === 'whoami'), world.maas.calls.filter((c) => c.op !== 'whoami')];
    expect(whoami.length).toBeLessThanOrEqual(1);
    // The verdict's two reads, then (machines drifted) MAAS's two witnesses: discovery and one events page.
    expect(reads.map((c) => `${c.method} ${c.path}${c.op ? `?op=${c.op}` : ''}`).sort()).toEqual(
      ['GET /MAAS/api/2.0/machines/', 'GET /MAAS/api/2.0/machines/?op=power_parameters', 'GET /MAAS/api/2.0/discovery/?op=by_unknown_mac', 'GET /MAAS/api/2.0/events/?op=query'].sort(),
    );
    const siteB = world.vmHosts.filter((h) => h.ssh.host.startsWith('127.0.20.'));
    expect(siteB.map((h) => h.ssh.commands.length - (before[world.vmHosts.indexOf(h)] ?? 0))).toEqual([1, 1]);
  });

  it('resolver-check on the isolated rack reports SERVFAIL with dig\'s reply header', async () => {
    const message = await command('resolver-check site-b');
    expect(message.text).toMatch(/^CRITICAL: The resolver of site-b .* answers SERVFAIL/);
    // The channel answer is short; dig's reply header (opcode, status, id) is the evidence, in its thread.
    const evidence = await emulator.waitFor((e) => e.channelMessages(LAB_CHANNELS.ops).find((m) => m.threadTs === message.ts && /dig's reply header: opcode QUERY, status SERVFAIL, id \d+/.test(JSON.stringify(m.blocks ?? m.text))), {
      timeoutMs: 10_000,
      description: "the thread reply with dig's reply header",
    });
    expect(JSON.stringify(evidence.blocks ?? evidence.text)).toMatch(/RESOLVER_SERVFAIL/);
  });

  it('an unknown target is answered with the known ones and queues nothing', async () => {
    const before = emulator.messages.length;
    const sent = await emulator.sendSlashCommand({ appUrl, text: 'dns-check nosuch', user: LAB_USERS.operator, channel: LAB_CHANNELS.ops });
    const answer = await emulator.waitFor((e) => e.answersTo(sent.responseUrl)[0], { timeoutMs: 5_000 });
    expect(answer.ephemeral).toBe(true);
    expect(answer.text).toContain('no cluster "nosuch". known clusters: prod, staging');
    await new Promise((r) => setTimeout(r, 300));
    // Thread replies of the earlier answers may still arrive; nothing new reaches the channel itself.
    expect(emulator.messages.slice(before).filter((m) => m.via === 'chat.postMessage' && !m.threadTs)).toEqual([]);
  });

  it('serves /healthz, /readyz and /metrics on the same port, counting MAAS requests', async () => {
    expect((await fetch(`${appUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${appUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { redis: true, config: true, slack: true } });
    const metrics = await (await fetch(`${appUrl}/metrics`)).text();
    expect(metrics).toMatch(/maas_chatops_peer_requests_total\{[^}]*peer="maas"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/maas_chatops_commands_total\{[^}]*subcommand="dns-check"[^}]*outcome="accepted"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/maas_chatops_jobs_total\{[^}]*kind="dns-check"[^}]*outcome="critical"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/maas_chatops_job_duration_seconds_count\{[^}]*kind="mac-diff"[^}]*\} [1-9]/);
  });
});

