import { evaluateResolver } from '../src/features/resolver/evaluate.ts';
import { gatherSiteResolver } from '../src/features/resolver/node-facing.ts';
import { probeSiteResolver } from '../src/features/resolver/site-probe.ts';
import { finishReport, type Report } from '../src/report.ts';
import { resolveTargets, runPerTarget } from '../src/targets.ts';
import type { JobContext, JobDefinition } from '../src/job-types.ts';

/** `/maas resolver-check <site>|all`: does each rack's node-facing resolver answer its own zone? */
export const resolverCheckJob: JobDefinition = {
  name: 'resolver-check',
  async run(ctx, data) {
    const sites = resolveTargets(ctx.config, 'site', data.target);
    return runPerTarget('resolver-check', sites, (site) => checkSite(ctx, site));
  },
};

async function checkSite(ctx: JobContext, name: string): Promise<Report> {
  const startedAt = new Date();
  const site = ctx.config.sites[name];
  if (!site?.rack) {
    return finishReport(
      {
        kind: 'resolver-check',
        target: name,
        verdict: `${name} has no rack: section in the config, so no resolver to check`,
        findings: [
          {
            code: 'RESOLVER_NOT_CONFIGURED',
            severity: 'info',
            subject: name,
            summary: `${name} has no rack-only controller configured; its nodes use the region's DNS`,
            evidence: { site: name },
            fix: `Add sites.${name}.rack (resolver, zone, ssh) to check a rack's resolver`,
          },
        ],
      },
      startedAt,
    );
  }
  // With the node-facing subnet configured, MAAS says which resolver nodes are given, and the rack's dhcpd.conf what they are handed.
  const snapshot =
    site.rack.subnet !== undefined
      ? (await gatherSiteResolver(site, ctx.adapters, { probeForwarder: 'when-delegated' })).snapshot
      : await probeSiteResolver(site, ctx.adapters.ssh);
  ctx.log.debug({ site: name, outcome: snapshot.observation.outcome }, 'resolver probed');
  return finishReport({ kind: 'resolver-check', target: name, ...evaluateResolver(snapshot) }, startedAt);
}
