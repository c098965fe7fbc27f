import { checkJob } from '../../jobs/check-job.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApprovalStack, type ApprovalStack } from '../helpers/approval-stack.ts';
import { fixResolverJob } from '../../jobs/fix-resolver.ts';
import { resolverCheck } from '../../src/features/resolver/index.ts';
import { onPath } from '../../lab/rack-sim/index.ts';
import { type EmulatedMessage } from '../../lab/slack-emulator/index.ts';
import { blocksText } from '../../lab/transcript.ts';
import { APPROVE_ACTION } from '../../src/edge/slack/plan-render.ts';
import { startResolverSite, type ResolverSite } from '../integration/fix-resolver-site.ts';

const resolverCheckJob = checkJob(resolverCheck);

// /maas fix-resolver through the real Bolt app (signed HTTP from the Slack emulator), BullMQ on
// real Redis, the workers with the Slack notifier and the approval buttons; the repair itself
// against the rack over SSH (dig, a dnsmasq SERVFAIL resolver, the forwarder dnsmasq started by
// rack.forwarderInstall) and the MAAS simulator.

const CHANNEL = 'C0OPS';
const SLACK_YAML = `slack:
  commandChannels: [${CHANNEL}]
  approvers: [U0LEAD1, U0LEAD2]
  approvalTtl: 15m
`;

beforeAll(() => {
  for (const program of ['dig', 'dnsmasq']) {
    if (!onPath(program)) throw new Error(`${program} is not installed: apt-get install bind9-dnsutils dnsmasq`);
  }
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Stack extends ApprovalStack {
  site: ResolverSite;
}

async function startStack(): Promise<Stack> {
  const site = await startResolverSite({ forwarder: 'stopped', install: 'daemon', slackYaml: SLACK_YAML });
  closers.push(() => site.close());
  const stack = await startApprovalStack({ config: site.config, adapters: site.ctx.adapters, secrets: site.secrets, jobs: [fixResolverJob], channel: CHANNEL, closers });
  return { site, ...stack };
}

const planIdOf = (m: EmulatedMessage) => /plan `([0-9a-f]{16})`/.exec(JSON.stringify(m.blocks))?.[1] ?? '';
const hasButtons = (m: EmulatedMessage) => (m.blocks ?? []).some((b) => (b as { type?: string }).type === 'actions');
const current = (stack: Stack, plan: EmulatedMessage) => stack.emulator.messages.find((m) => m.ts === plan.ts) as EmulatedMessage;
/** The plan's progress in its thread; the steps and evidence posted with the plan are `planReplies`. */
const thread = (stack: Stack, plan: EmulatedMessage) => stack.emulator.channelMessages(CHANNEL).filter((m) => m.threadTs === plan.ts && !m.text.startsWith('Evidence for '));
const planReplies = (stack: Stack, plan: EmulatedMessage) => stack.emulator.channelMessages(CHANNEL).filter((m) => m.threadTs === plan.ts && m.text.startsWith('Evidence for '));
const ephemeralTo = (stack: Stack, user: string) => stack.emulator.messages.filter((m) => m.ephemeral && m.user === user && m.via === 'response_url');
const click = (stack: Stack, user: string, plan: EmulatedMessage) =>
  stack.emulator.clickButton({ appUrl: stack.appUrl, actionId: APPROVE_ACTION, user, channel: CHANNEL, messageTs: plan.ts, value: planIdOf(plan) });

describe('/maas fix-resolver: a plan, its approval and its run, through the real Bolt app', () => {
  it('refuses the requester and a non-approver; one approver runs it once: forwarder installed and verified, subnet changed and read back, resolver healthy', async () => {
    const stack = await startStack();
    const sent = await stack.emulator.sendSlashCommand({ appUrl: stack.appUrl, text: 'fix-resolver site-b', user: 'U0LEAD1', channel: CHANNEL });
    expect(sent.status).toBe(200);
    const plan = await stack.emulator.waitFor(
      (e) => e.channelMessages(CHANNEL).find((m) => m.via === 'chat.postMessage' && !m.threadTs && /plan `[0-9a-f]{16}`/.test(JSON.stringify(m.blocks))),
      { timeoutMs: 15_000, description: 'the plan message' },
    );
    expect(plan.text).toMatch(/^CRITICAL: Plan: point nodes at site-b to the forwarder 127\.0\.0\.1:\d+: start it with rack\.forwarderInstall/);
    expect(JSON.stringify(plan.blocks)).toMatch(/\*5 steps\* on forwarder 127\.0\.0\.1:\d+, subnet 10\.20\.0\.0\/24 and site-b: 2 writes and 3 checks/);
    // Every step, whole, and every finding's evidence: in the thread, posted with the plan.
    const replies = await stack.emulator.waitFor(() => (planReplies(stack, plan).length ? planReplies(stack, plan) : undefined), { timeoutMs: 5_000, description: 'the plan steps in its thread' });
    const blocks = JSON.stringify(replies.map((m) => m.blocks));
    for (const action of ['install-forwarder', 'verify-forwarder', 'set-subnet-dns', 'check-dhcp', 'check-resolver', 'RESOLVER_DHCP_SERVERS', 'RESOLVER_DHCP_RACK_FIRST']) expect(blocks).toContain(action);

    await click(stack, 'U0LEAD1', plan);
    await stack.emulator.waitFor(() => ephemeralTo(stack, 'U0LEAD1').length === 1, { description: "the requester's refusal" });
    expect(ephemeralTo(stack, 'U0LEAD1')[0]?.text).toMatch(/someone else must approve it/);
    await click(stack, 'U0OPS2', plan);
    await stack.emulator.waitFor(() => ephemeralTo(stack, 'U0OPS2').length === 1, { description: "a non-approver's refusal" });
    expect(ephemeralTo(stack, 'U0OPS2')[0]?.text).toMatch(/Only approvers \(slack\.approvers\) may approve a repair/);
    expect(stack.site.installs()).toEqual([]);
    expect(stack.site.writes()).toEqual([]);

    // Double and concurrent clicks (the approver twice, the requester once more): the plan runs once.
    const clicks = await Promise.all([click(stack, 'U0LEAD2', plan), click(stack, 'U0LEAD2', plan), click(stack, 'U0LEAD1', plan)]);
    expect(clicks.map((c) => c.status)).toEqual([200, 200, 200]);
    await stack.emulator.waitFor(() => /Done, approved by <@U0LEAD2>/.test(JSON.stringify(current(stack, plan).blocks)), { timeoutMs: 20_000, description: 'the plan marked done' });
    expect(hasButtons(current(stack, plan))).toBe(false);
    expect(stack.site.installs()).toHaveLength(1);
    expect(stack.site.writes().map((c) => `${c.method} ${c.path} ${JSON.stringify(c.form)}`)).toEqual([
      'PUT /MAAS/api/2.0/subnets/20/ {"dns_servers":["127.0.0.1"],"allow_dns":["false"],"allow_proxy":["false"],"managed":["false"]}',
      'PUT /MAAS/api/2.0/ipranges/7/ {"comment":["site-b nodes"]}',
    ]);

    // Progress in the thread; the result is the plan message itself (edited), posted once.
    const texts = thread(stack, plan).map((m) => m.text);
    expect(texts).toHaveLength(4);
    expect(texts[0]).toMatch(/^Re-measured: the world matches the plan\. Running 5 steps on forwarder 127\.0\.0\.1:\d+, subnet 10\.20\.0\.0\/24 and site-b, one at a time/);
    expect(texts[1]).toMatch(/^forwarder 127\.0\.0\.1:\d+: ✅ install-forwarder verified .*→ ✅ verify-forwarder verified/);
    expect(texts[2]).toMatch(/^subnet 10\.20\.0\.0\/24: ✅ set-subnet-dns verified .*\(read back\).* → ✅ check-dhcp verified .*re-saved IP range 7 unchanged/);
    expect(texts[3]).toMatch(/^site-b: ✅ check-resolver verified \(Nodes at site-b resolve through the forwarder/);
    const finished = blocksText(current(stack, plan).blocks ?? []).join('\n');
    expect(finished).toContain('fix-resolver site-b: Done: 5 of 5 steps verified');
    expect(finished).toMatch(/Re-checked after the run: /);
    expect(finished).not.toMatch(/RESOLVER_SERVFAIL|\*Fix:\*/);
    expect(stack.audit.filter((e) => e.kind === 'approval').map((e) => e.actor)).toEqual(['U0LEAD2']);

    const [check] = await resolverCheckJob.run(stack.site.ctx, { target: 'site-b' });
    expect(check?.status).toBe('ok');
    expect(check?.findings[0]?.evidence).toMatchObject({ nodeFacing: 'forwarder' });
  }, 60_000);
});
