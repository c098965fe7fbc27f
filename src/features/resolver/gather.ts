import type { SiteConfig } from '../../core/config.ts';
import type { CheckContext } from '../check-spec.ts';
import { gatherSiteResolver } from './node-facing.ts';
import { probeSiteResolver } from './site-probe.ts';
import type { ResolverSnapshot } from './types.ts';

/** resolver-check's snapshot: the site, and what its rack's resolver showed (absent: the site has no rack: section). */
export interface ResolverCheckSnapshot {
  site: string;
  probed?: ResolverSnapshot;
}

/**
 * With the node-facing subnet configured, MAAS says which resolver nodes are given, and the
 * rack's dhcpd.conf what they are handed; otherwise the rack's resolver alone is asked.
 */
export async function gatherResolverCheck(ctx: CheckContext, site: SiteConfig): Promise<ResolverCheckSnapshot> {
  if (!site.rack) return { site: site.name };
  const probed =
    site.rack.subnet !== undefined
      ? (await gatherSiteResolver(site, ctx.adapters, { probeForwarder: 'when-delegated' })).snapshot
      : await probeSiteResolver(site, ctx.adapters.ssh);
  ctx.log.debug({ site: site.name, outcome: probed.observation.outcome }, 'resolver probed');
  return { site: site.name, probed };
}
