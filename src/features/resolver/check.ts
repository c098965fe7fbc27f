import { defineCheck, type Evaluation } from '../check-spec.ts';
import { evaluateResolver } from './evaluate.ts';
import { gatherResolverCheck, type ResolverCheckSnapshot } from './gather.ts';
import { fixResolverRepair } from './repair.ts';

/** `resolver-check <site>|all`: does each rack's node-facing resolver answer its own zone? */
export const resolverCheck = defineCheck({
  name: 'resolver-check',
  targetKind: 'site',
  schedule: 'resolver',
  summary: "does each rack's node-facing resolver answer its own zone (dig SOA on the rack)",
  fix: { name: 'fix-resolver', plans: "the rack resolver repair (the forwarder on the rack, then the subnet's DNS in MAAS)", repair: fixResolverRepair },
  dedup: 'same-target',
  // A site without rack: has no resolver to probe: scanning it would only raise a standing alert.
  appliesTo: (site) => site.rack !== undefined,
  gather: gatherResolverCheck,
  evaluate: evaluateResolverCheck,
});

export function evaluateResolverCheck(snapshot: ResolverCheckSnapshot): Evaluation {
  if (snapshot.probed) return evaluateResolver(snapshot.probed);
  const name = snapshot.site;
  return {
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
  };
}
