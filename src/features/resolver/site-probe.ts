import type { RackConfig, SiteConfig } from '../../core/config.ts';
import { ConfigError, describeError } from '../../core/errors.ts';
import { digSoaCommand, observeDig, parseDig } from '../../adapters/ssh/dig.ts';
import { rackTarget } from '../../adapters/ssh/targets.ts';
import type { SshConnector, SshSession } from '../../adapters/ssh/types.ts';
import { probeSoaDirect, type DirectProbeOptions } from './soa-direct.ts';
import { resolverLabel, type ResolverObservation, type ResolverSnapshot } from './types.ts';

export interface SiteProbeOptions {
  /** How long dig may run on the rack, SSH included (default 15 s; dig itself gives up after ~2 s). */
  commandTimeoutMs?: number;
  direct?: DirectProbeOptions;
}

/** Probes a site's node-facing resolver the way rack.probe says: dig on the rack, or from here. */
export async function probeSiteResolver(site: SiteConfig, ssh: SshConnector, options: SiteProbeOptions = {}): Promise<ResolverSnapshot> {
  const rack = requireRack(site);
  const base = snapshotBase(site, rack);
  if (rack.probe === 'direct') {
    const observation = await probeSoaDirect({ host: rack.resolverHost, port: rack.resolverPort }, rack.zone, options.direct);
    return { ...base, probedBy: "the bot's own resolver (probe: direct)", observation };
  }
  let probedBy = 'dig on the rack over SSH';
  let session: SshSession | undefined;
  try {
    const target = rackTarget(site);
    probedBy = `dig on the rack (${target.user}@${target.host}) over SSH`;
    session = await ssh.connect(target);
    const probe = await digOnRack(session, rack, options.commandTimeoutMs);
    return { ...base, probedBy, command: probe.command, observation: probe.observation };
  } catch (err) {
    return { ...base, probedBy, observation: { outcome: 'failed', reason: describeError(err) } };
  } finally {
    session?.close();
  }
}

/** Runs the SOA query with dig on an open rack session (fix-resolver re-measures with it too). */
export async function digOnRack(session: SshSession, rack: RackConfig, timeoutMs = 15_000): Promise<{ command: string; observation: ResolverObservation }> {
  const command = digSoaCommand({ host: rack.resolverHost, port: rack.resolverPort }, rack.zone);
  const result = await session.exec(command, { timeoutMs });
  if (result.timedOut) {
    return { command, observation: { outcome: 'failed', reason: `dig did not finish within ${Math.round(timeoutMs / 1000)}s on ${session.host}` } };
  }
  return { command, observation: observeDig(parseDig(result.stdout, result.stderr, result.code, rack.zone), result.stderr) };
}

function requireRack(site: SiteConfig): RackConfig {
  if (!site.rack) throw new ConfigError(`sites.${site.name}.rack: not configured`, 'Add rack (resolver, zone, probe, ssh) to check its resolver');
  return site.rack;
}

function snapshotBase(site: SiteConfig, rack: RackConfig): Omit<ResolverSnapshot, 'probedBy' | 'observation'> {
  const base: Omit<ResolverSnapshot, 'probedBy' | 'observation'> = {
    site: site.name,
    resolver: resolverLabel(rack.resolverHost, rack.resolverPort),
    zone: rack.zone,
  };
  if (rack.forwarder) base.forwarder = resolverLabel(rack.forwarder.host, rack.forwarder.port);
  return base;
}
