import { setTimeout as sleep } from 'node:timers/promises';
import type { Adapters } from '../../adapters/adapters.ts';
import { evaluateResolver } from './evaluate.ts';
import type { RackConfig, SiteConfig } from '../../core/config.ts';
import { describeError } from '../../core/errors.ts';
import { answersZone, gatherSiteResolver } from './node-facing.ts';
import { digOnRack } from './site-probe.ts';
import { resolverLabel, type ResolverObservation } from './types.ts';
import type { StepOutcome } from '../../core/report.ts';
import type { StepOf } from '../../engine/repair/plan-step.ts';
import { sh, type SafeCommand } from '../../adapters/ssh/shell-quote.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshSession } from '../../adapters/ssh/types.ts';
import type { StepContext, StepRunner } from '../../engine/repair/executor.ts';
import { lostAnswerNote, sendOrReadBack } from '../../engine/repair/send-or-read-back.ts';
import { settleRackDhcp, type DhcpStepOptions } from './repair-dhcp-step.ts';
import { runCanary, type CanaryRunOptions } from './repair-canary.ts';
import { commandDigest, describeState, differingFields, sameState, STEP, subnetState } from './repair-planner.ts';

type Outcome = { outcome: StepOutcome; detail: string };

export interface ResolverStepOptions extends DhcpStepOptions {
  /** How long rack.forwarderInstall may run (default 120 s). */
  installTimeoutMs?: number;
  /** How often verify-forwarder asks before it gives up (default 3), and the pause between (default 1 s): a fresh forwarder may take a moment. */
  verifyAttempts?: number;
  verifyIntervalMs?: number;
  /** How long the canary is followed, and how often MAAS is asked (defaults: 40 min, 15 s). */
  canary?: CanaryRunOptions;
}

/** The operator's rack.forwarderInstall, run exactly as configured: one quoted argument to `sh -c`, never assembled by the bot. */
export function forwarderInstallCommand(configured: string): SafeCommand {
  return sh`sh -c ${configured}`;
}

/** fix-resolver steps: the forwarder on the rack (over SSH), the subnet in MAAS, then resolver-check again. */
export function resolverStepRunner(site: SiteConfig, adapters: Adapters, options: ResolverStepOptions = {}): StepRunner {
  return {
    async run(step, context) {
      const rack = site.rack;
      if (!rack?.forwarder) return { outcome: 'refused', detail: `sites.${site.name}.rack.forwarder is no longer configured` };
      if (step.action === STEP.install) return installForwarder(site, rack, adapters, step, context, options);
      if (step.action === STEP.verify) return verifyForwarder(site, rack, adapters, options);
      if (step.action === STEP.subnet) return setSubnetDns(site, adapters, step, context);
      if (step.action === STEP.dhcp) return settleRackDhcp(site, rack, adapters, step, options);
      if (step.action === STEP.check) return checkResolver(site, adapters);
      if (step.action === STEP.canary) return runCanary(adapters.maas(site.maas), step, context, options.canary);
      return { outcome: 'refused', detail: `unknown fix-resolver step "${step.action}"` };
    },
  };
}

async function withRack<T>(site: SiteConfig, adapters: Adapters, use: (session: SshSession) => Promise<T>): Promise<T> {
  const session = await adapters.ssh.connect(rackTarget(site));
  try {
    return await use(session);
  } finally {
    session.close();
  }
}

function askForwarder(session: SshSession, rack: RackConfig): Promise<{ observation: ResolverObservation }> {
  const forwarder = rack.forwarder as { host: string; port: number };
  return digOnRack(session, { ...rack, resolverHost: forwarder.host, resolverPort: forwarder.port });
}

async function installForwarder(site: SiteConfig, rack: RackConfig, adapters: Adapters, step: StepOf<'install-forwarder'>, context: StepContext, options: ResolverStepOptions): Promise<Outcome> {
  const configured = rack.forwarderInstall;
  const label = forwarderLabel(rack);
  if (!configured) return { outcome: 'refused', detail: `sites.${site.name}.rack.forwarderInstall is no longer configured: nothing was run` };
  if (commandDigest(configured) !== step.params.commandSha256) {
    return { outcome: 'refused', detail: `sites.${site.name}.rack.forwarderInstall changed after this plan was made: nothing was run; run fix-resolver again to approve the new command` };
  }
  return withRack(site, adapters, async (session) => {
    const before = await askForwarder(session, rack);
    if (answersZone(before.observation)) {
      return {
        outcome: 'verified',
        detail: context.resumed
          ? `${label} answers: the install started before the restart took effect; not run again`
          : `${label} already answers ${rack.zone}: the install was not run`,
      };
    }
    if (context.resumed) {
      // The journal says the install began and never finished; it may have run. Never twice per plan.
      return {
        outcome: 'failed',
        detail: `the install was started before a restart and ${label} still does not answer; it is not run a second time for one plan: look at the forwarder on ${session.host}, then run fix-resolver again`,
      };
    }
    const timeoutMs = options.installTimeoutMs ?? 120_000;
    const result = await context.write('rack.forwarderInstall', () => session.exec(forwarderInstallCommand(configured), { timeoutMs }));
    if (result.timedOut) return { outcome: 'failed', detail: `rack.forwarderInstall did not finish within ${Math.round(timeoutMs / 1000)}s on ${session.host}` };
    const said = lastLine(result.stderr) ?? lastLine(result.stdout);
    if (result.code !== 0) {
      return { outcome: 'failed', detail: `rack.forwarderInstall exited ${result.code ?? result.signal ?? 'without a status'} on ${session.host}${said ? `: ${said}` : ''}` };
    }
    return { outcome: 'verified', detail: `ran rack.forwarderInstall on ${session.host}: exit 0${said ? ` (${said})` : ''}` };
  });
}

async function verifyForwarder(site: SiteConfig, rack: RackConfig, adapters: Adapters, options: ResolverStepOptions): Promise<Outcome> {
  const label = forwarderLabel(rack);
  const attempts = Math.max(1, options.verifyAttempts ?? 3);
  return withRack(site, adapters, async (session) => {
    let last: ResolverObservation | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await sleep(options.verifyIntervalMs ?? 1000);
      last = (await askForwarder(session, rack)).observation;
      if (last.outcome === 'reply' && answersZone(last)) {
        return { outcome: 'verified', detail: `${label} answers ${rack.zone} SOA, serial ${last.soa?.serial ?? '?'} (dig on ${session.host})` };
      }
    }
    return {
      outcome: 'failed',
      detail: `${label} ${observedLine(last)} for ${rack.zone} SOA from ${session.host} (asked ${attempts} time${attempts === 1 ? '' : 's'}): the plan stops here, and MAAS is not pointed at a server that does not answer`,
    };
  });
}

async function setSubnetDns(site: SiteConfig, adapters: Adapters, step: StepOf<'set-subnet-dns'>, context: StepContext): Promise<Outcome> {
  const { subnetId: id, from, to, cidr } = step.params;
  if (to.dns_servers.length === 0) return { outcome: 'refused', detail: 'refused: an empty dns_servers is never written' };
  const maas = adapters.maas(site.maas);
  const before = await maas.getSubnet(id);
  if (before.cidr !== cidr) return { outcome: 'refused', detail: `subnet ${id} is now ${before.cidr}, planned as ${cidr}: run fix-resolver again` };
  const current = subnetState(before);
  if (sameState(current, to)) {
    return { outcome: 'verified', detail: `subnet ${id} reads ${describeState(current)}${context.resumed ? ' (the update sent before the restart took effect)' : ' already'}` };
  }
  if (!sameState(current, from)) {
    return { outcome: 'refused', detail: `subnet ${id} now reads ${describeState(current)}, planned from ${describeState(from)}: it changed; run fix-resolver again` };
  }
  const update = { dns_servers: to.dns_servers, allow_dns: to.allow_dns, allow_proxy: to.allow_proxy, ...(to.managed === undefined ? {} : { managed: to.managed }) };
  const sent = await sendOrReadBack(() => maas.updateSubnetDns(id, update), async () => differingFields(subnetState(await maas.getSubnet(id)), to).length === 0);
  if (sent.kind === 'applied') return { outcome: 'verified', detail: `subnet ${id}: ${describeState(from)} → ${describeState(to)} (${lostAnswerNote(sent.error)})` };
  if (sent.kind === 'failed') return { outcome: 'failed', detail: `PUT subnets/${id}/: ${describeError(sent.error)}` };
  const after = subnetState(await maas.getSubnet(id));
  const wrong = differingFields(after, to);
  return wrong.length === 0
    ? { outcome: 'verified', detail: `subnet ${id}: ${describeState(from)} → ${describeState(after)} (read back)` }
    : { outcome: 'failed', detail: `subnet ${id}: MAAS accepted the update but reads back ${describeState(after)} (${wrong.join(', ')} not as sent): fix it in MAAS` };
}

async function checkResolver(site: SiteConfig, adapters: Adapters): Promise<Outcome> {
  const { snapshot } = await gatherSiteResolver(site, adapters, { probeForwarder: 'when-delegated', via: 'ssh' });
  const { verdict, findings } = evaluateResolver(snapshot);
  const healthy = findings.some((f) => f.code === 'RESOLVER_OK') && findings.every((f) => f.severity === 'info');
  if (healthy && snapshot.delegation) return { outcome: 'verified', detail: verdict };
  if (!snapshot.delegation) {
    const why = snapshot.subnetProblem ?? `MAAS's subnet does not give nodes ${snapshot.forwarder ?? 'the forwarder'} with allow_dns off`;
    return { outcome: 'failed', detail: `resolver-check: ${why} (${verdict})` };
  }
  return { outcome: 'failed', detail: `resolver-check: ${verdict}` };
}

function forwarderLabel(rack: RackConfig): string {
  const forwarder = rack.forwarder as { host: string; port: number };
  return resolverLabel(forwarder.host, forwarder.port);
}

function observedLine(observation: ResolverObservation | undefined): string {
  if (!observation) return 'was not asked';
  if (observation.outcome === 'reply') return `answers ${observation.status}${observation.status === 'NOERROR' ? ' without the SOA' : ''}`;
  if (observation.outcome === 'no-reply') return `does not reply (${observation.detail})`;
  return `could not be asked (${observation.reason})`;
}

function lastLine(text: string): string | undefined {
  const line = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return line ? line.slice(0, 300) : undefined;
}
