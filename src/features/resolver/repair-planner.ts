import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { evaluateResolver } from './evaluate.ts';
import { sourceOf } from '../dhcpd-conf/index.ts';
import type { RackConfig } from '../../core/config.ts';
import { answersZone, type SiteResolverGather } from './node-facing.ts';
import { resolverLabel, type ResolverObservation } from './types.ts';
import type { Subnet } from '../../adapters/maas/types.ts';
import type { Finding, StepResult } from '../../core/report.ts';
import type { PlanStep, ResolverStep, SubnetDnsState } from '../../engine/repair/plan-step.ts';
import { CANARY_STEP, canaryStep, type CanaryLookup } from './repair-canary.ts';
import { withId, type RepairPlan } from '../../engine/repair/plan.ts';

/** What fix-resolver plans from: the site's rack config and a fresh resolver-check of it (absent when the config already rules it out). */
export interface ResolverRepairInput {
  site: string;
  rack?: RackConfig;
  gathered?: SiteResolverGather;
  /** rack.canary, looked up in MAAS (absent when no canary is configured). */
  canary?: CanaryLookup;
}

export type { SubnetDnsState } from '../../engine/repair/plan-step.ts';

export const STEP = {
  install: 'install-forwarder',
  verify: 'verify-forwarder',
  subnet: 'set-subnet-dns',
  dhcp: 'check-dhcp',
  check: 'check-resolver',
  canary: CANARY_STEP,
} as const;

/** sha256 of rack.forwarderInstall: the plan names the command it was approved with, so a changed config refuses. */
export function commandDigest(command: string): string {
  return createHash('sha256').update(command).digest('hex').slice(0, 16);
}

/** The config fields fix-resolver needs, or why it cannot run (and how to set it). Pure. */
export function configRefusal(site: string, rack: RackConfig | undefined): string | null {
  const where = `sites.${site}.rack`;
  if (!rack) return `${site} has no rack: section, so there is no rack resolver to repair; add ${where} (resolver, zone, ssh, forwarder, subnet)`;
  if (!rack.forwarder) {
    return `rack.forwarder is not configured: set ${where}.forwarder to the address of the forwarder nodes should use (e.g. forwarder: 10.20.0.53, the alias the rack's dnsmasq listens on); the bot never picks one`;
  }
  if (isIP(rack.forwarder.host) === 0) {
    return `${where}.forwarder is ${rack.forwarder.host}, not an IP address: MAAS's dns_servers and DHCP option 6 carry addresses only`;
  }
  if (rack.subnet === undefined) {
    return `rack.subnet is not configured: set ${where}.subnet to the node-facing subnet's CIDR (e.g. 10.20.0.0/24) or its MAAS id, so fix-resolver knows which subnet to change`;
  }
  if (!rack.ssh) {
    return `${where}.ssh is not configured: fix-resolver verifies the forwarder with dig on the rack (and runs rack.forwarderInstall there); add ssh (host, user, privateKey, hostKey)`;
  }
  return null;
}

/**
 * Pure: a fresh resolver-check of the site in, the fix-resolver plan out. The standing fix of seed
 * 001: a forwarder on the rack (started with the operator's rack.forwarderInstall when it does not
 * answer), verified from the rack, then MAAS's node-facing subnet pointed at it with allow_dns off,
 * read back, and the resolver check run again. Never points nodes at a forwarder that does not
 * answer, never guesses the subnet, never touches a healthy site.
 */
export function planResolverRepair(input: ResolverRepairInput): RepairPlan {
  const { site, rack, gathered } = input;
  const findings: Finding[] = gathered ? evaluateResolver(gathered.snapshot).findings : [];
  const draft = { kind: 'fix-resolver' as const, target: site, findings };
  const nothing = (why: string): RepairPlan => withId({ ...draft, steps: [], refusals: [], verdict: `Nothing to repair at ${site}: ${why}` });
  const refuse = (reason: string, action: string = STEP.subnet): RepairPlan =>
    withId({ ...draft, steps: [], refusals: [{ subject: site, action, outcome: 'refused', detail: reason }], verdict: `Refused for ${site}: ${reason}` });

  const configProblem = configRefusal(site, rack);
  if (configProblem || !rack?.forwarder || rack.subnet === undefined) return refuse(configProblem ?? 'the rack config is incomplete');
  if (!gathered) return refuse('the resolver was not measured');
  const { snapshot } = gathered;
  const forwarder = rack.forwarder;
  const forwarderLabel = resolverLabel(forwarder.host, forwarder.port);

  if (snapshot.observation.outcome === 'failed') {
    return refuse(`the rack resolver could not be measured (${snapshot.observation.reason}); fix-resolver acts only on a measured failure`);
  }
  const verdict = evaluateResolver(snapshot);
  if (verdict.findings.some((f) => f.code === 'RESOLVER_OK') && verdict.findings.every((f) => f.severity === 'info')) {
    return nothing(`the resolver is already healthy (${verdict.verdict})`);
  }
  const match = gathered.subnet;
  if (!match) return refuse('the node-facing subnet was not looked up');
  if ('problem' in match) return refuse(`the node-facing subnet cannot be found unambiguously: ${match.problem}`);
  const probe = gathered.forwarder;
  if (!probe) return refuse(`the forwarder ${forwarderLabel} was not asked`, STEP.verify);
  if (probe.observation.outcome === 'failed') return refuse(`the forwarder ${forwarderLabel} could not be asked from the rack: ${probe.observation.reason}`, STEP.verify);
  const forwarderAnswers = answersZone(probe.observation);
  if (!forwarderAnswers && !rack.forwarderInstall) {
    return refuse(
      `the forwarder ${forwarderLabel} ${observed(probe.observation)} for ${rack.zone} SOA from the rack, and MAAS is never pointed at a server that does not answer: ` +
        `start the forwarder on the rack (or set sites.${site}.rack.forwarderInstall to the command that installs or restarts it), then run fix-resolver again`,
      STEP.verify,
    );
  }

  const subnet = match.subnet;
  const from = subnetState(subnet);
  const to: SubnetDnsState = { ...from, dns_servers: [forwarder.host], allow_dns: false };
  const forwarderSubject = `forwarder ${forwarderLabel}`;
  const subnetSubject = `subnet ${subnet.cidr}`;
  const steps: ResolverStep[] = [];
  if (!forwarderAnswers && rack.forwarderInstall) {
    steps.push({
      subject: forwarderSubject,
      action: STEP.install,
      detail: `${forwarderLabel} ${observed(probe.observation)}: run rack.forwarderInstall on the rack (${rack.ssh?.user ?? '?'}@${rack.ssh?.host ?? '?'}) exactly as configured, with sh -c: ${rack.forwarderInstall}`,
      params: { site, forwarder: forwarderLabel, commandSha256: commandDigest(rack.forwarderInstall) },
    });
  }
  steps.push({
    subject: forwarderSubject,
    action: STEP.verify,
    detail: `dig @${forwarder.host} -p ${forwarder.port} ${rack.zone} SOA on the rack must answer NOERROR with the SOA; otherwise the plan stops here and MAAS is not changed`,
    params: { site, forwarder: forwarderLabel, zone: rack.zone },
  });
  if (!sameState(from, to)) {
    steps.push({
      subject: subnetSubject,
      action: STEP.subnet,
      detail: subnetDetail(subnet, from, to, forwarder.port),
      params: { subnetId: subnet.id, cidr: subnet.cidr, from: { ...from }, to: { ...to } },
    });
  }
  const dhcp = snapshot.dhcp;
  if (dhcp?.outcome === 'read') {
    steps.push({
      subject: subnetSubject,
      action: STEP.dhcp,
      detail:
        `read \`option domain-name-servers\` for ${subnet.cidr} in ${dhcp.path} on the rack (now ${dhcp.servers.join(', ') || '(none)'}, ${sourceOf(dhcp)}); it must be ${to.dns_servers.join(', ')}. ` +
        (dhcp.scope.startsWith('subnet') || dhcp.scope === 'none' ? '' : `Nodes get it from ${dhcp.scope}, which MAAS writes from a DHCP snippet: no subnet edit changes that, so this step fails until the snippet is edited. `) +
        `If it is not: before MAAS 3.7 wait for MAAS's own rewrite (a subnet edit triggers one); from 3.7 (GET version/), which does not rewrite it after a subnet edit, re-save one of the subnet's IP ranges unchanged (PUT ipranges/<id>/ with its own comment): ` +
        `MAAS then rewrites dhcpd.conf and restarts dhcpd on the racks of that VLAN; read again, up to 60 s`,
      params: { site, subnetId: subnet.id, cidr: subnet.cidr, expect: [...to.dns_servers] },
    });
  }
  steps.push({
    subject: site,
    action: STEP.check,
    detail: `resolver-check again: subnet ${subnet.cidr} must give nodes ${forwarder.host} with allow_dns off, and ${forwarderLabel} must answer ${rack.zone} SOA`,
    params: { site, forwarder: forwarderLabel, subnetId: subnet.id },
  });

  const refusals: StepResult[] = [];
  if (input.canary) {
    const canary = canaryStep(site, input.canary);
    if ('step' in canary) steps.push(canary.step);
    else refusals.push(canary.refusal);
  }

  const planFindings = [...findings];
  const install = steps.some((s) => s.action === STEP.install) ? 'start it with rack.forwarderInstall, ' : '';
  const change = steps.some((s) => s.action === STEP.subnet)
    ? `then set subnet ${subnet.cidr} to dns_servers ${forwarder.host} with allow_dns off (allow_proxy and managed sent as they are)`
    : `subnet ${subnet.cidr} already points nodes at it`;
  return withId({
    ...draft,
    findings: planFindings,
    steps,
    refusals,
    verdict: `Plan: point nodes at ${site} to the forwarder ${forwarderLabel}: ${install}verify it answers ${rack.zone} from the rack, ${change}${canaryNote(steps, refusals)}`,
  });
}

function canaryNote(steps: readonly PlanStep[], refusals: readonly StepResult[]): string {
  const step = steps.find((s) => s.action === STEP.canary);
  if (step) return `, then commission the canary ${step.params.hostname} and follow it to Ready`;
  return refusals.some((r) => r.action === STEP.canary) ? ' (no canary: refused, see below)' : '';
}

export function subnetState(subnet: Subnet): SubnetDnsState {
  const state: SubnetDnsState = { dns_servers: [...subnet.dns_servers], allow_dns: subnet.allow_dns, allow_proxy: subnet.allow_proxy };
  if (typeof subnet.managed === 'boolean') state.managed = subnet.managed;
  return state;
}

/** The fields of `expected` that `actual` differs in, by name. */
export function differingFields(actual: SubnetDnsState, expected: SubnetDnsState): string[] {
  const out: string[] = [];
  if (actual.dns_servers.join(' ') !== expected.dns_servers.join(' ')) out.push('dns_servers');
  if (actual.allow_dns !== expected.allow_dns) out.push('allow_dns');
  if (actual.allow_proxy !== expected.allow_proxy) out.push('allow_proxy');
  if (expected.managed !== undefined && actual.managed !== expected.managed) out.push('managed');
  return out;
}

export function sameState(actual: SubnetDnsState, expected: SubnetDnsState): boolean {
  return differingFields(actual, expected).length === 0;
}

export function describeState(state: SubnetDnsState): string {
  const managed = state.managed === undefined ? '' : `, managed ${onOff(state.managed)}`;
  return `dns_servers ${state.dns_servers.join(' ') || '(none)'}, allow_dns ${onOff(state.allow_dns)}, allow_proxy ${onOff(state.allow_proxy)}${managed}`;
}

function subnetDetail(subnet: Subnet, from: SubnetDnsState, to: SubnetDnsState, port: number): string {
  const kept = [`allow_proxy ${onOff(to.allow_proxy)}`, ...(to.managed === undefined ? [] : [`managed ${onOff(to.managed)}`])].join(' and ');
  const portNote = port === 53 ? '' : ` (DHCP option 6 carries no port: nodes will ask ${to.dns_servers[0]} on port 53; the configured :${port} is only what dig asks)`;
  return (
    `PUT subnets/${subnet.id}/: dns_servers ${from.dns_servers.join(' ') || '(none)'} → ${to.dns_servers.join(' ')}, allow_dns ${onOff(from.allow_dns)} → off; ` +
    `${kept} sent as read (MAAS keeps an omitted field on update; sending it makes the PUT explicit); then read back${portNote}`
  );
}

function onOff(value: boolean): string {
  return value ? 'on' : 'off';
}

function observed(observation: ResolverObservation): string {
  if (observation.outcome === 'reply') return `answers ${observation.status}${observation.status === 'NOERROR' && !observation.soa ? ' without the SOA' : ''}`;
  if (observation.outcome === 'no-reply') return `does not reply (${observation.detail})`;
  return `could not be asked (${observation.reason})`;
}
