import type { Config } from '../../core/config.ts';

export interface SitesOverview {
  regions: { name: string; url: string }[];
  sites: { name: string; maas: string; machines: string; resolver?: string; probe?: string }[];
  clusters: { name: string; maas: string; maasCluster: string; namespace: string }[];
}

function describeFilter(f: Config['sites'][string]['machines']): string {
  const parts = [f.zone && `zone=${f.zone}`, f.pool && `pool=${f.pool}`, f.tags?.length && `tags=${f.tags.join(',')}`];
  const set = parts.filter(Boolean);
  return set.length ? set.join(' ') : 'all machines';
}

export function sitesOverview(config: Config): SitesOverview {
  return {
    regions: Object.values(config.maas).map((r) => ({ name: r.name, url: r.url })),
    sites: Object.values(config.sites).map((s) => ({
      name: s.name,
      maas: s.maas,
      machines: describeFilter(s.machines),
      ...(s.rack ? { resolver: `${s.rack.resolverHost}:${s.rack.resolverPort}`, probe: s.rack.probe } : {}),
    })),
    clusters: Object.values(config.clusters).map((c) => ({
      name: c.name,
      maas: c.maas,
      maasCluster: c.maasCluster,
      namespace: c.kube.namespace,
    })),
  };
}

export function sitesText(o: SitesOverview): string {
  const lines = ['MAAS regions:'];
  for (const r of o.regions) lines.push(`  ${r.name}  ${r.url}`);
  lines.push('Sites:');
  if (!o.sites.length) lines.push('  (none)');
  for (const s of o.sites) {
    lines.push(`  ${s.name}  maas=${s.maas}  ${s.machines}${s.resolver ? `  resolver=${s.resolver} (${s.probe})` : ''}`);
  }
  lines.push('Clusters:');
  if (!o.clusters.length) lines.push('  (none)');
  for (const c of o.clusters) lines.push(`  ${c.name}  maas=${c.maas}  MaasCluster ${c.namespace}/${c.maasCluster}`);
  return lines.join('\n');
}
