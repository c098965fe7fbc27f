import { blocksText } from '../../lab/transcript.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { fixDnsJob } from '../../jobs/fix-dns.ts';
import { fixMacsJob } from '../../jobs/fix-macs.ts';
import type { Adapters } from '../../src/adapters/adapters.ts';
import { dnsHash } from '../../src/features/dns/evaluate.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createKubeClient } from '../../src/adapters/kube/client.ts';
import { dnsLabScenario, kubeconfigFor, startKubeSimulator, type KubeSimulator } from '../../lab/kube-sim/index.ts';
import { dnsResource, machine, randomApiKey, scenario, startMaasSimulator, virshPower, type MaasSimulator } from '../../lab/maas-sim/index.ts';
import { type EmulatedMessage, type SlackEmulatorOptions } from '../../lab/slack-emulator/index.ts';
import { startMacLab, type MacLab } from '../../lab/vmhost-sim/index.ts';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { NODE_STATUS } from '../../src/adapters/maas/node-status.ts';
import { APPROVE_ACTION, REJECT_ACTION } from '../../src/edge/slack/plan-render.ts';
import { startApprovalStack, type ApprovalStack } from '../helpers/approval-stack.ts';
import { waitUntil } from '../helpers/redis.ts';

// The whole approval path with real parts: /maas from the Slack emulator to the real Bolt app
// (signed HTTP), BullMQ on real Redis, the workers with the Slack notifier, the approval buttons,
// and the MAAS and Kubernetes simulators the repair changes.

const CHANNEL = 'C0OPS';
const SLACK_YAML = `
slack:
  commandChannels: [${CHANNEL}]
  approvers: [U0LEAD1, U0LEAD2]
  approvalTtl: 15m
`;

type Stack = ApprovalStack;

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

function startStack(config: Config, adapters: Adapters, secrets: string[], emulator: Pick<SlackEmulatorOptions, 'userGroups' | 'missingScopes'> = {}): Promise<Stack> {
  return startApprovalStack({ config, adapters, secrets, jobs: [fixDnsJob, fixMacsJob], channel: CHANNEL, closers, emulator });
}

// ---------------------------------------------------------------- Slack helpers

const hasButtons = (m: EmulatedMessage) => (m.blocks ?? []).some((b) => (b as { type?: string }).type === 'actions');
const buttonTexts = (m: EmulatedMessage) =>
  (m.blocks ?? []).flatMap((b) => ((b as { type?: string; elements?: { text?: { text?: string } }[] }).type === 'actions' ? ((b as { elements: { text?: { text?: string } }[] }).elements.map((e) => e.text?.text ?? '')) : []));
const planIdOf = (m: EmulatedMessage) => /plan `([0-9a-f]{16})`/.exec(JSON.stringify(m.blocks))?.[1] ?? '';

async function planMessage(stack: Stack, nth = 0): Promise<EmulatedMessage> {
  return stack.emulator.waitFor(
    (e) => e.channelMessages(CHANNEL).filter((m) => m.via === 'chat.postMessage' && !m.threadTs && /plan `[0-9a-f]{16}`/.test(JSON.stringify(m.blocks)))[nth],
    { timeoutMs: 15_000, description: `plan message #${nth + 1}` },
  );
}

function click(stack: Stack, user: string, plan: EmulatedMessage, action = APPROVE_ACTION) {
  // The plan id travels as the button's value, as Slack sends it even after the message changed.
  return stack.emulator.clickButton({ appUrl: stack.appUrl, actionId: action, user, channel: CHANNEL, messageTs: plan.ts, value: planIdOf(plan) });
}

const ephemeralTo = (stack: Stack, user: string) => stack.emulator.messages.filter((m) => m.ephemeral && m.user === user && m.via === 'response_url');
/** The plan's progress in its thread; the steps and evidence posted with the plan are `planReplies`. */
const thread = (stack: Stack, plan: EmulatedMessage) => stack.emulator.channelMessages(CHANNEL).filter((m) => m.threadTs === plan.ts && !m.text.startsWith('Evidence for '));
const planReplies = (stack: Stack, plan: EmulatedMessage) => stack.emulator.channelMessages(CHANNEL).filter((m) => m.threadTs === plan.ts && m.text.startsWith('Evidence for '));
const current = (stack: Stack, plan: EmulatedMessage) => stack.emulator.messages.find((m) => m.ts === plan.ts) as EmulatedMessage;

async function waitForState(stack: Stack, plan: EmulatedMessage, pattern: RegExp): Promise<void> {
  await stack.emulator.waitFor(() => pattern.test(JSON.stringify(current(stack, plan).blocks)), { timeoutMs: 15_000, description: `the plan message to show ${pattern}` });
}

async function waitForEphemeral(stack: Stack, user: string, count: number): Promise<EmulatedMessage[]> {
  return stack.emulator.waitFor(() => (ephemeralTo(stack, user).length >= count ? ephemeralTo(stack, user) : undefined), { description: `${count} ephemeral answer(s) to ${user}` });
}

// ---------------------------------------------------------------- fix-dns: the prod lab

interface DnsLab {
  stack: Stack;
  maas: MaasSimulator;
  kube: KubeSimulator;
}

async function startDnsLab(slackYaml = SLACK_YAML, emulator: Pick<SlackEmulatorOptions, 'userGroups' | 'missingScopes'> = {}): Promise<DnsLab> {
  const lab = dnsLabScenario();
  const prod = lab.clusters.find((c) => c.name === 'prod');
  if (!prod) throw new Error('no prod cluster in the lab');
  const apiKey = randomApiKey();
  const maas = await startMaasSimulator({ scenario: scenario({ dnsresources: lab.maasDnsResourceInputs.map((r) => dnsResource(r)) }), apiKeys: [apiKey] });
  closers.push(() => maas.close());
  const kube = await startKubeSimulator({ state: structuredClone(prod.kube) });
  closers.push(() => kube.close());
  const yaml = `${slackYaml}
maas:
  region-a: { url: ${maas.url}, apiKey: env:MAAS_KEY }
clusters:
  prod: { maas: region-a, kube: { kubeconfig: env:PROD_KUBECONFIG } }
`;
  const loaded = parseConfigText(yaml, { path: 'approval.yaml', env: { MAAS_KEY: apiKey, PROD_KUBECONFIG: kubeconfigFor(kube) } });
  const config = loaded.config;
  const adapters: Adapters = {
    maas: (region) => createMaasClient(config.maas[region] as NonNullable<Config['maas'][string]>, { retries: 0, timeoutMs: 3_000 }),
    kube: (cluster) => createKubeClient(cluster),
    ssh: { connect: () => Promise.reject(new Error('fix-dns must not use SSH')) },
  };
  return { stack: await startStack(config, adapters, loaded.secrets, emulator), maas, kube };
}

const dnsWrites = (lab: DnsLab) => [...lab.maas.calls.filter((c) => c.method !== 'GET').map((c) => `PUT ${c.form.ip_addresses?.[0]}`), ...lab.kube.calls.filter((c) => c.method === 'PATCH').map(() => 'PATCH')];

async function askFor(stack: Stack, text: string, user: string): Promise<EmulatedMessage> {
  const sent = await stack.emulator.sendSlashCommand({ appUrl: stack.appUrl, text, user, channel: CHANNEL });
  expect(sent.status).toBe(200);
  return planMessage(stack);
}

describe('/maas fix-dns: a plan, its approval and its run, through the real Bolt app', () => {
  it('refuses the requester and a non-approver, runs once for an approver, reads back, and reports in the thread', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0LEAD1');
    expect(buttonTexts(plan)).toEqual(['Approve and run', 'Reject']);
    expect(buttonTexts(plan).map((t) => t.split(' ')[0])).toEqual(['Approve', 'Reject']);
    expect(plan.text).toMatch(/^CRITICAL: Plan: put 10\.11\.135\.36 back on prod-k8s\.maas\.example/);
    expect(JSON.stringify(plan.blocks)).toContain('Requested by <@U0LEAD1>; awaiting approval');
    // The plan's audit entry is written once its message is posted; a person cannot click sooner.
    await waitUntil(() => stack.audit.some((e) => e.kind === 'plan'), 5_000);

    await click(stack, 'U0LEAD1', plan);
    const [own] = await waitForEphemeral(stack, 'U0LEAD1', 1);
    expect(own?.text).toMatch(/You asked for this plan, so someone else must approve it \(slack\.selfApproval is off\)/);
    await click(stack, 'U0OPS2', plan);
    const [stranger] = await waitForEphemeral(stack, 'U0OPS2', 1);
    expect(stranger?.text).toMatch(/Only approvers \(slack\.approvers\) may approve a repair/);
    expect(dnsWrites(lab)).toEqual([]);
    expect(hasButtons(current(stack, plan))).toBe(true);

    await click(stack, 'U0LEAD2', plan);
    await waitForState(stack, plan, /Done, approved by <@U0LEAD2> at /);
    expect(hasButtons(current(stack, plan))).toBe(false);
    expect(current(stack, plan).updates.map((u) => u.via)).toEqual(['chat.update', 'chat.update']);
    expect(JSON.stringify(current(stack, plan).updates[0]?.blocks)).toContain('Approved by <@U0LEAD2>');
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.36', 'PATCH']);
    expect(lab.kube.state.maasClusters[0]?.metadata.annotations?.['infrastructure.cluster.x-k8s.io/last-applied-dns-hash']).toBe(dnsHash(['10.11.135.36']));

    // The thread carries the progress; the result is the plan message itself, edited once more, not a second post.
    const texts = thread(stack, plan).map((m) => m.text);
    expect(texts).toHaveLength(2);
    // Posted with the plan, before any progress: every step whole.
    expect(planReplies(stack, plan)).toHaveLength(1);
    expect(JSON.stringify(planReplies(stack, plan)[0]!.blocks)).toMatch(/1\. \*set-dns-ips\* .*2\. \*set-dns-hash\*/);
    expect(texts[0]).toMatch(/^Re-measured: the world matches the plan\. Running 2 steps on 1 DNS record, one at a time/);
    expect(texts[1]).toMatch(/^prod-k8s\.maas\.example: ✅ set-dns-ips verified .*→ ✅ set-dns-hash verified/);
    const finished = blocksText(current(stack, plan).blocks ?? []).join('\n');
    expect(finished).toContain('fix-dns prod: Done: 2 of 2 steps verified');
    expect(finished).toMatch(/^:white_check_mark: \*OK\* · fix-dns prod: /m);
    expect(finished).toContain('*2 of 2 steps verified* on 1 DNS record');
    expect(finished).toMatch(/Re-checked after the run: /);
    // A finished repair never shows the findings it repaired, nor their "Fix:".
    expect(finished).not.toMatch(/DNS_RECORD_|\*Fix:\*|\*Plan\* `/);

    const refusals = await stack.plans.refusals(planIdOf(plan));
    expect(refusals.map((r) => [r.user, r.action])).toEqual([
      ['U0LEAD1', 'approve'],
      ['U0OPS2', 'approve'],
    ]);
    // The whole incident record: the plan posted (by its requester), the refusals, the approval, each write and the run's end.
    expect(stack.audit.map((e) => [e.kind, e.actor, e.outcome])).toEqual([
      ['plan', 'U0LEAD1', 'posted'],
      ['refusal', 'U0LEAD1', 'refused'],
      ['refusal', 'U0OPS2', 'refused'],
      ['approval', 'U0LEAD2', 'approved'],
      ['repair-step', 'U0LEAD2', 'verified'],
      ['repair-step', 'U0LEAD2', 'verified'],
      ['repair', 'U0LEAD2', 'applied'],
    ]);
    expect(stack.audit.filter((e) => e.kind === 'repair-step').map((e) => [e.action, e.subject, e.planId])).toEqual([
      ['set-dns-ips', 'prod-k8s.maas.example', planIdOf(plan)],
      ['set-dns-hash', 'prod-k8s.maas.example', planIdOf(plan)],
    ]);
  }, 30_000);

  it('double and concurrent Approve clicks by two approvers run the plan exactly once', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    const clicks = ['U0LEAD1', 'U0LEAD2', 'U0LEAD1', 'U0LEAD2', 'U0LEAD1', 'U0LEAD2'].map((u) => click(stack, u, plan));
    expect((await Promise.all(clicks)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await waitForState(stack, plan, /Done, approved by/);
    await stack.emulator.waitFor(() => ephemeralTo(stack, 'U0LEAD1').length + ephemeralTo(stack, 'U0LEAD2').length === 5, { description: 'five refusals' });
    const refusals = [...ephemeralTo(stack, 'U0LEAD1'), ...ephemeralTo(stack, 'U0LEAD2')];
    for (const r of refusals) expect(r.text).toMatch(/already approved.*runs at most once/);
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.36', 'PATCH']);
    expect(thread(stack, plan).filter((m) => m.text.startsWith('Re-measured'))).toHaveLength(1);
    expect((await stack.plans.refusals(planIdOf(plan))).length).toBe(5);

    // A click long after the run is refused the same way.
    await click(stack, 'U0LEAD2', plan);
    await stack.emulator.waitFor(() => ephemeralTo(stack, 'U0LEAD2').some((m) => /already approved and has run/.test(m.text)), { description: 'a late refusal' });
    expect(dnsWrites(lab)).toHaveLength(2);
  }, 30_000);

  it('an approval after approvalTtl is refused and the plan is marked expired', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    stack.clock.offsetMs = 15 * 60_000 + 1_000;
    await click(stack, 'U0LEAD2', plan);
    const [answer] = await waitForEphemeral(stack, 'U0LEAD2', 1);
    expect(answer?.text).toMatch(/This plan expired at .* without approval; nothing was changed/);
    await waitForState(stack, plan, /Expired at .* without approval/);
    expect(hasButtons(current(stack, plan))).toBe(false);
    stack.clock.offsetMs = 0;
    await click(stack, 'U0LEAD1', plan);
    await waitForEphemeral(stack, 'U0LEAD1', 1);
    expect(ephemeralTo(stack, 'U0LEAD1')[0]?.text).toMatch(/already expired/);
    expect(dnsWrites(lab)).toEqual([]);
  }, 30_000);

  it('MAAS unreachable at the re-measure: nothing runs, the thread says why, the plan is closed and can be planned again', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    // Every attempt of the re-measure's MAAS read fails.
    lab.maas.injectFaults({ status: 503, count: 1_000 });
    await click(stack, 'U0LEAD2', plan);
    const why = await stack.emulator.waitFor(() => thread(stack, plan).find((m) => /^Not run: re-measured right before running/.test(m.text)), { timeoutMs: 20_000, description: 'the thread says why nothing ran' });
    expect(why.text).toMatch(/MAAS region-a answered 503/);
    lab.maas.clearFaults();
    expect(hasButtons(current(stack, plan))).toBe(false);
    expect(dnsWrites(lab)).toEqual([]);
    const again = await stack.emulator.sendSlashCommand({ appUrl: stack.appUrl, text: 'fix-dns prod', user: 'U0OPS1', channel: CHANNEL });
    expect(again.status).toBe(200);
    const second = await planMessage(stack, 1);
    expect(buttonTexts(second)).toEqual(['Approve and run', 'Reject']);
  }, 30_000);

  it('Reject closes the plan: nothing runs, a later Approve is refused', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    await click(stack, 'U0OPS2', plan, REJECT_ACTION);
    await waitForEphemeral(stack, 'U0OPS2', 1);
    expect(ephemeralTo(stack, 'U0OPS2')[0]?.text).toMatch(/Only an approver .* or the person who asked/);
    await click(stack, 'U0OPS1', plan, REJECT_ACTION);
    await waitForState(stack, plan, /Rejected by <@U0OPS1> at .*nothing was changed/);
    await click(stack, 'U0LEAD1', plan);
    await waitForEphemeral(stack, 'U0LEAD1', 1);
    expect(ephemeralTo(stack, 'U0LEAD1')[0]?.text).toMatch(/already rejected by <@U0OPS1>/);
    expect(dnsWrites(lab)).toEqual([]);
  }, 30_000);

  it('the world changed between plan and approval: refused, nothing written, the new plan posted for a new approval', async () => {
    const lab = await startDnsLab();
    const { stack } = lab;
    const first = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    // The control plane moved to another address after the plan was shown.
    const cp = lab.kube.state.maasMachines.find((m) => m.metadata.name === 'prod-cp-0');
    if (!cp?.status?.addresses) throw new Error('no prod-cp-0 in the kube lab');
    cp.status.addresses = [{ type: 'ExternalIP', address: '10.11.135.37' }];
    await click(stack, 'U0LEAD2', first);
    const second = await planMessage(stack, 1);
    await waitForState(stack, first, /but not run: the world changed/);
    expect(dnsWrites(lab)).toEqual([]);
    expect(thread(stack, first).some((m) => /^Not run: re-measured right before running/.test(m.text))).toBe(true);
    expect(second.text).toMatch(/Plan: put 10\.11\.135\.37 back/);
    expect(hasButtons(second)).toBe(true);
    expect(JSON.stringify(second.blocks)).toContain('Requested by <@U0OPS1>');

    await click(stack, 'U0LEAD2', second);
    await waitForState(stack, second, /Done, approved by <@U0LEAD2>/);
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.37', 'PATCH']);
  }, 30_000);
});

// ---------------------------------------------------------------- fix-macs: a drifted site

describe('/maas fix-dns with two approvers required (slack.approvalsRequiredFor)', () => {
  const QUORUM_YAML = `
slack:
  commandChannels: [${CHANNEL}]
  approvers: [U0LEAD1, U0LEAD2, U0LEAD3]
  approvalTtl: 15m
  approvalsRequiredFor: { fix-dns: 2 }
`;

  it('waits for a second distinct approver, counts a repeated click once, shows who approved when, and runs exactly once', async () => {
    const lab = await startDnsLab(QUORUM_YAML);
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    expect(JSON.stringify(plan.blocks)).toContain('awaiting approval by 2 distinct approvers until');

    await click(stack, 'U0LEAD1', plan);
    const [counted] = await waitForEphemeral(stack, 'U0LEAD1', 1);
    expect(counted?.text).toContain('Your approval is counted (1 of 2); the plan runs after 1 more distinct approver approve it.');
    await waitForState(stack, plan, /approved so far by <@U0LEAD1> at .*\(1 of 2\)/);
    expect(hasButtons(current(stack, plan))).toBe(true);

    await click(stack, 'U0LEAD1', plan);
    const [, again] = await waitForEphemeral(stack, 'U0LEAD1', 2);
    expect(again?.text).toContain('You have approved this plan already; an approver counts once. It still waits for 1 more distinct approver.');
    expect(dnsWrites(lab)).toEqual([]);

    await click(stack, 'U0LEAD2', plan);
    await waitForState(stack, plan, /Done, approved by <@U0LEAD1> at .* and <@U0LEAD2> at /);
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.36', 'PATCH']);

    // A third approval after the run changes nothing: the plan ran once.
    await click(stack, 'U0LEAD3', plan);
    const [late] = await waitForEphemeral(stack, 'U0LEAD3', 1);
    expect(late?.text).toMatch(/This plan was already approved and has run/);
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.36', 'PATCH']);
    expect(stack.audit.filter((e) => e.kind === 'approval').map((e) => [e.actor, e.outcome])).toEqual([
      ['U0LEAD1', 'approved (1 of 2)'],
      ['U0LEAD2', 'approved'],
    ]);
  }, 30_000);
});

describe('/maas fix-dns approved by a Slack user group (an S… id in slack.approvers)', () => {
  const GROUP = 'S0ONCALL';
  const groupYaml = (extra = '') => `
slack:
  commandChannels: [${CHANNEL}]
  approvers: [${GROUP}]
  approvalTtl: 15m
  userGroupCacheTtl: 5m
${extra}`;
  const groupReads = (stack: Stack) => stack.emulator.calls.filter((c) => c.method === 'usergroups.users.list').map((c) => c.params.usergroup);

  it("a member of the group approves and the plan runs once; someone outside it is refused", async () => {
    const lab = await startDnsLab(groupYaml(), { userGroups: { [GROUP]: ['U0LEAD2', 'W0LEAD9'] } });
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');

    await click(stack, 'U0OPS2', plan);
    const [stranger] = await waitForEphemeral(stack, 'U0OPS2', 1);
    expect(stranger?.text).toMatch(/Only approvers \(slack\.approvers\) may approve a repair, and you are not one\. Ask one of the members of user group S0ONCALL\./);
    expect(dnsWrites(lab)).toEqual([]);

    await click(stack, 'U0LEAD2', plan);
    await waitForState(stack, plan, /Done, approved by <@U0LEAD2> at /);
    expect(dnsWrites(lab)).toEqual(['PUT 10.11.135.36', 'PATCH']);
    // Both clicks within the cache's 5 minutes: the members were read once.
    expect(groupReads(stack)).toEqual([GROUP]);
  }, 30_000);

  it('a member removed from the group is refused once the cached members expire', async () => {
    const lab = await startDnsLab(groupYaml('  approvalsRequired: 2'), { userGroups: { [GROUP]: ['U0LEAD1', 'U0LEAD2'] } });
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    await click(stack, 'U0LEAD1', plan);
    const [counted] = await waitForEphemeral(stack, 'U0LEAD1', 1);
    expect(counted?.text).toContain('Your approval is counted (1 of 2)');

    stack.emulator.setUserGroup(GROUP, ['U0LEAD1']);
    stack.clock.offsetMs = 5 * 60_000 + 1_000;
    await click(stack, 'U0LEAD2', plan);
    const [removed] = await waitForEphemeral(stack, 'U0LEAD2', 1);
    expect(removed?.text).toMatch(/Only approvers \(slack\.approvers\) may approve a repair, and you are not one/);
    expect(groupReads(stack)).toEqual([GROUP, GROUP]);
    expect(dnsWrites(lab)).toEqual([]);
    expect(hasButtons(current(stack, plan))).toBe(true);
  }, 30_000);

  it('a group the bot cannot read grants nothing, and the refusal says why', async () => {
    const lab = await startDnsLab(groupYaml(), { userGroups: { [GROUP]: ['U0LEAD2'] }, missingScopes: ['usergroups:read'] });
    const { stack } = lab;
    const plan = await askFor(stack, 'fix-dns prod', 'U0OPS1');
    await click(stack, 'U0LEAD2', plan);
    const [refused] = await waitForEphemeral(stack, 'U0LEAD2', 1);
    expect(refused?.text).toContain('The approvers group S0ONCALL could not be read: missing_scope usergroups:read, so it grants nothing');
    expect(dnsWrites(lab)).toEqual([]);
    expect(hasButtons(current(stack, plan))).toBe(true);
    expect(stack.audit.filter((e) => e.kind === 'refusal').map((e) => e.actor)).toEqual(['U0LEAD2']);
  }, 30_000);
});

describe('/maas fix-macs in batches (repair.maxSubjects)', () => {
  it('each batch counts from the current plan: "Plan 1 of 3", then "Plan 2 of 3" from "Plan the next batch", then "Plan 3 of 3"', async () => {
    const HOST = '127.0.0.1';
    const names = ['site-b-node1', 'site-b-node2', 'site-b-node3'];
    const lab: MacLab = await startMacLab({
      machines: names.map((hostname, i) => machine({ system_id: `sb000${i + 1}`, hostname, zone: 'site-b', status: 'Ready', macs: [`52:54:00:b0:00:0${i + 1}`], power: virshPower(HOST, hostname) })),
      sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains: names.map((name, i) => ({ name, nics: [{ mac: `52:54:00:8${i + 1}:40:17` }] })) } }] }],
    });
    closers.push(() => lab.close());
    const raw = JSON.parse(lab.configText) as Record<string, unknown>;
    const loaded = parseConfigText(JSON.stringify({ ...raw, repair: { maxSubjects: 1 }, slack: { commandChannels: [CHANNEL], approvers: ['U0LEAD1', 'U0LEAD2'] } }), { path: 'mac-batches.yaml', env: lab.env });
    const stack = await startStack(loaded.config, lab.adapters, loaded.secrets);

    let plan = await askFor(stack, 'fix-macs site-b', 'U0LEAD1');
    for (const [nth, label] of ['Plan 1 of 3', 'Plan 2 of 3', 'Plan 3 of 3'].entries()) {
      expect(plan.text).toMatch(new RegExp(`^CRITICAL: ${label}: update 1 MAC on 1 machine at site-b`));
      await click(stack, 'U0LEAD2', plan);
      await waitForState(stack, plan, /Done, approved by <@U0LEAD2>/);
      if (nth === 2) break;
      const next = (current(stack, plan).blocks ?? []).flatMap((b) => ((b as { type?: string }).type === 'actions' ? (b as { elements: { action_id: string; value?: string }[] }).elements : []))[0]!;
      await stack.emulator.clickButton({ appUrl: stack.appUrl, actionId: next.action_id, value: next.value ?? '', user: 'U0LEAD1', channel: CHANNEL, messageTs: plan.ts });
      plan = await planMessage(stack, nth + 1);
    }
    expect(buttonTexts(current(stack, plan))).toEqual([]);
  }, 90_000);
});

describe('/maas fix-macs through Slack, approved by an approver', () => {
  it('requester refused, approver approves; the Failed machine goes through Broken and ends Ready, the Deployed one is never marked broken', async () => {
    const HOST = '127.0.0.1';
    const lab: MacLab = await startMacLab({
      machines: [
        machine({ system_id: 'sb0001', hostname: 'site-b-node1', zone: 'site-b', status: 'Failed commissioning', macs: ['52:54:00:b0:00:01'], live_boot_mac: '52:54:00:81:40:17', power: virshPower(HOST, 'site-b-node1') }),
        machine({ system_id: 'sb0002', hostname: 'site-b-node2', zone: 'site-b', status: 'Deployed', macs: ['52:54:00:b0:00:02'], power: virshPower(HOST, 'site-b-node2') }),
      ],
      sites: [
        {
          name: 'site-b',
          zone: 'site-b',
          vmHosts: [{ address: HOST, state: { domains: [{ name: 'site-b-node1', nics: [{ mac: '52:54:00:81:40:17' }] }, { name: 'site-b-node2', nics: [{ mac: '52:54:00:82:40:2e' }], running: true }] } }],
        },
      ],
    });
    closers.push(() => lab.close());
    const raw = JSON.parse(lab.configText) as Record<string, unknown>;
    const loaded = parseConfigText(JSON.stringify({ ...raw, slack: { commandChannels: [CHANNEL], approvers: ['U0LEAD1', 'U0LEAD2'] } }), { path: 'mac-approval.yaml', env: lab.env });
    const stack = await startStack(loaded.config, lab.adapters, loaded.secrets);

    const plan = await askFor(stack, 'fix-macs site-b', 'U0LEAD1');
    expect(plan.text).toMatch(/^CRITICAL: Plan: update 2 MACs on 2 machines at site-b \(1 through mark_broken → update → commission\)/);
    await click(stack, 'U0LEAD1', plan);
    expect((await waitForEphemeral(stack, 'U0LEAD1', 1))[0]?.text).toMatch(/someone else must approve/);
    expect(lab.maas.calls.filter((c) => c.method !== 'GET')).toEqual([]);

    await click(stack, 'U0LEAD2', plan);
    await waitForState(stack, plan, /Done, approved by <@U0LEAD2>/);
    const writes = lab.maas.calls.filter((c) => c.method !== 'GET').map((c) => `${c.path.split('/')[5]} ${c.op ?? c.method}`);
    expect(writes).toEqual(['sb0001 mark_broken', 'sb0001 PUT', 'sb0001 commission', 'sb0002 PUT']);
    const state = (id: string) => lab.maas.state.machines.find((m) => m.system_id === id);
    expect(state('sb0001')).toMatchObject({ status: NODE_STATUS.READY });
    expect(state('sb0002')).toMatchObject({ status: NODE_STATUS.DEPLOYED, power_state: 'on' });
    const texts = thread(stack, plan).map((m) => m.text);
    expect(texts).toHaveLength(4);
    expect(texts[1]).toBe('site-b-node1: commissioning started (Broken → Commissioning); following it until Ready or failed');
    expect(texts[2]).toMatch(/^site-b-node1: ✅ mark-broken verified .*→ ✅ set-mac verified .*→ ✅ commission verified \(Broken → Commissioning → Ready/);
    expect(texts[3]).toMatch(/^site-b-node2: ✅ set-mac verified/);
    const finished = blocksText(current(stack, plan).blocks ?? []).join('\n');
    expect(finished).toContain('fix-macs site-b: Done: 4 of 4 steps verified');
    expect(finished).toMatch(/Re-checked after the run: /);
    expect(finished).not.toMatch(/MAC_DRIFT|\*Fix:\*/);
  }, 60_000);
});
