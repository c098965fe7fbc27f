import type { Config } from '../../core/config.ts';
import { knownTargets, resolveTargets } from '../../core/targets.ts';

/** The configured sites and clusters a name stands for (`all`: every one); [] for an unknown name. */
export function targetNames(config: Config, name: string): string[] {
  const found = new Set<string>();
  for (const kind of ['site', 'cluster'] as const) {
    try {
      for (const t of resolveTargets(config, kind, name)) found.add(t.name);
    } catch {
      // not a target of this kind
    }
  }
  return [...found].sort();
}

export function unknownTargetText(config: Config, name: string): string {
  const known = [...knownTargets(config, 'site'), ...knownTargets(config, 'cluster')];
  const hint = known.length ? `known sites and clusters: ${[...new Set(known)].sort().join(', ')}` : 'no sites or clusters are configured';
  return `no site or cluster "${name.slice(0, 63)}". ${hint}`;
}
