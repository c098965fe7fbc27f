import { CUSTOM_DNS_ANNOTATION, LAST_APPLIED_DNS_HASH_ANNOTATION } from '../../adapters/kube/capmaas.ts';
import type { MaasClusterObject, MaasMachineObject } from '../../adapters/kube/types.ts';
import type { DnsResource } from '../../adapters/maas/types.ts';
import { probeFailed, type Finding, type Severity } from '../../core/report.ts';
import type { ClientView } from './client-view.ts';
import { clientViewFinding } from './client-view-finding.ts';
import { invalidCidrs } from './cidr.ts';
import { controllerReleaseOf, FIXED_CONTROLLER_VERSION, VULNERABLE_CONTROLLER_RANGES, type ControllerLine, type ControllerRelease } from './controller-version.ts';
import { computeDesiredSet, type ControlPlaneMachine, type DesiredSet } from './desired-set.ts';
import { compareStrings, EMPTY_SET_HASH } from './dns-hash.ts';

export { dnsHash, EMPTY_SET_HASH } from './dns-hash.ts';
export { computeDesiredSet, type ControlPlaneMachine, type DesiredSet } from './desired-set.ts';

/** What the controller's Deployment told us, if we looked. */
export type ControllerObservation = { image: string } | { absent: true } | { error: string };

/** Everything the DNS check needs, gathered by jobs/dns-check.ts. */
export interface DnsSnapshot {
  /** The configured cluster name (the report's target). */
  cluster: string;
  /** Where the MaasCluster was looked up, for messages. */
  maasClusterRef: { namespace: string; name: string };
  /** null: no such MaasCluster. */
  maasCluster: MaasClusterObject | null;
  /** MaasMachines labelled with the cluster's name (control plane and workers). */
  machines: MaasMachineObject[];
  /** null = no filter (no ConfigMap, no config entry). */
  preferredSubnets: string[] | null;
  preferredSubnetsSource: 'config' | 'configmap' | 'none';
  /** The MAAS DNS resources for the API server FQDN, or why they could not be read. */
  dns: { resources: DnsResource[]; domainUnknown?: boolean } | { error: string };
  /** Absent when the Deployment was not read. */
  controller?: ControllerObservation;
  /** What clients get for the API name (clusters.<name>.clientView); absent when not configured. */
  clientView?: ClientView;
}

export interface DnsEvaluation {
  findings: Finding[];
  verdict: string;
}

/** The API server name the controller maintains (pkg/maas/scope/cluster.go GetDNSName). */
export function apiServerFqdn(maasCluster: MaasClusterObject): string | null {
  const fromStatus = maasCluster.status?.network?.dnsName;
  const fromEndpoint = maasCluster.spec?.controlPlaneEndpoint?.host;
  if (isCustomDns(maasCluster)) return fromEndpoint || null;
  return fromStatus || fromEndpoint || null;
}

export function isCustomDns(maasCluster: MaasClusterObject): boolean {
  return Object.prototype.hasOwnProperty.call(maasCluster.metadata.annotations ?? {}, CUSTOM_DNS_ANNOTATION);
}

export function lastAppliedHash(maasCluster: MaasClusterObject): string | null {
  return maasCluster.metadata.annotations?.[LAST_APPLIED_DNS_HASH_ANNOTATION] ?? null;
}

/** Pure: snapshot in, findings and verdict out. */
export function evaluateDns(snapshot: DnsSnapshot): DnsEvaluation {
  const findings = dnsFindings(snapshot);
  const fqdn = snapshot.maasCluster ? apiServerFqdn(snapshot.maasCluster) : null;
  const resources = 'resources' in snapshot.dns ? snapshot.dns.resources : [];
  const recorded = resources.length === 1 ? recordedIpsOf(resources[0] as DnsResource) : undefined;
  const verdict = dnsVerdict(findings, { fqdn, recorded, line: releaseOf(snapshot)?.line ?? null });
  if (snapshot.clientView && fqdn) {
    const maasRecord = !('resources' in snapshot.dns) || resources.length > 1 ? null : (recorded ?? []);
    findings.push(clientViewFinding(fqdn, maasRecord, snapshot.clientView));
  }
  return { findings, verdict };
}

export function dnsFindings(snapshot: DnsSnapshot): Finding[] {
  const { maasCluster, maasClusterRef: ref, cluster } = snapshot;
  if (!maasCluster) {
    return [
      probeFailed(
        cluster,
        `no MaasCluster "${ref.name}" in namespace "${ref.namespace}"`,
        `Check clusters.${cluster}.maasCluster and clusters.${cluster}.kube.namespace in the config (kubectl get maasclusters -A)`,
      ),
    ];
  }
  if (isCustomDns(maasCluster)) return [notManaged(snapshot, maasCluster)];
  const fqdn = apiServerFqdn(maasCluster);
  if (!fqdn) {
    return [
      probeFailed(
        cluster,
        `MaasCluster ${ref.namespace}/${ref.name} has no API server name yet (status.network.dnsName is empty)`,
        'The controller sets it on its first reconcile: check that capmaas-controller-manager is running',
      ),
    ];
  }
  const ctx = buildContext(snapshot, maasCluster, fqdn);
  return [...controllerFindings(ctx), ...machineFindings(ctx), ...recordFindings(ctx)];
}

interface Context {
  cluster: string;
  fqdn: string;
  desired: DesiredSet;
  annotation: string | null;
  snapshot: DnsSnapshot;
  controllerImage: string | null;
  /** The release line (controller-version.ts), by its effect on the record. */
  controllerState: 'vulnerable' | 'fixed' | 'no-hash-cache' | 'unknown';
  release: ControllerRelease | null;
  /** The image, or why it is unknown: for evidence. */
  controllerEvidence: string;
}

function imageOf(snapshot: DnsSnapshot): string | null {
  return snapshot.controller && 'image' in snapshot.controller ? snapshot.controller.image : null;
}

function releaseOf(snapshot: DnsSnapshot): ControllerRelease | null {
  const image = imageOf(snapshot);
  return image ? controllerReleaseOf(image) : null;
}

function buildContext(snapshot: DnsSnapshot, maasCluster: MaasClusterObject, fqdn: string): Context {
  const controllerImage = imageOf(snapshot);
  const release = releaseOf(snapshot);
  const controllerState = !release
    ? 'unknown'
    : release.line === 'unguarded-hash-cache'
      ? 'vulnerable'
      : release.line === 'guarded-hash-cache'
        ? 'fixed'
        : 'no-hash-cache';
  return {
    cluster: snapshot.cluster,
    fqdn,
    desired: computeDesiredSet(snapshot.machines, snapshot.preferredSubnets),
    annotation: lastAppliedHash(maasCluster),
    snapshot,
    controllerImage,
    controllerState,
    release,
    controllerEvidence: describeController(snapshot.controller),
  };
}

function describeController(c: ControllerObservation | undefined): string {
  if (!c) return 'unknown (not read)';
  if ('image' in c) return c.image;
  if ('absent' in c) return 'unknown (controller Deployment not found)';
  return `unknown (${c.error})`;
}

function notManaged(snapshot: DnsSnapshot, maasCluster: MaasClusterObject): Finding {
  const host = maasCluster.spec?.controlPlaneEndpoint?.host ?? null;
  return {
    code: 'DNS_NOT_MANAGED',
    severity: 'info',
    subject: host ?? snapshot.cluster,
    summary: `The MaasCluster carries ${CUSTOM_DNS_ANNOTATION}: the controller manages no DNS record for this cluster, so there is nothing to check`,
    evidence: { annotationKey: CUSTOM_DNS_ANNOTATION, controlPlaneEndpoint: host },
  };
}

function controllerFindings(ctx: Context): Finding[] {
  if (ctx.controllerState !== 'vulnerable' || !ctx.controllerImage) return [];
  const version = ctx.release;
  return [
    {
      code: 'DNS_CONTROLLER_VULNERABLE',
      severity: 'warning',
      subject: ctx.controllerImage,
      summary: `The controller runs ${version?.version ?? 'a release'}, a release that caches the DNS hash without the empty-set guard (PCP-6608): a brief control-plane power-off can wipe ${ctx.fqdn} for good`,
      evidence: {
        image: ctx.controllerImage,
        version: version?.version ?? null,
        vulnerable: VULNERABLE_CONTROLLER_RANGES,
        fixedIn: FIXED_CONTROLLER_VERSION,
      },
      fix: UPGRADE_TEXT,
    },
  ];
}

function machineFindings(ctx: Context): Finding[] {
  const { desired } = ctx;
  if (desired.ips.length > 0 || desired.existingCount === 0) return [];
  const machines = machinesEvidence(desired.controlPlane);
  const recordedIps = recordedOf(ctx);
  const guard = guardText(ctx);
  if (desired.runningCount === 0) {
    return [
      {
        code: 'DNS_CP_NOT_RUNNING',
        severity: 'critical',
        subject: ctx.fqdn,
        summary: `${desired.existingCount} control-plane machine(s) exist but none is powered on and Deploying/Deployed: the desired IP set is empty; ${guard}`,
        evidence: { fqdn: ctx.fqdn, machines, recorded: recordedIps, desired: [] },
        fix: joinFix([
          `Bring a control-plane machine back (${names(desired.controlPlane.filter((m) => !m.deleting))}): power it on in MAAS and wait for the MaasMachine to report Deployed and powered`,
          ctx.controllerState === 'no-hash-cache'
            ? 'The record fills again by itself on the reconcile that follows (the MaasMachine change triggers one): nothing to repair in DNS'
            : 'Leave the DNS record as it is: there is no IP to put in it yet',
          ctx.controllerState === 'fixed' ? null : upgradeText(ctx.controllerState),
        ]),
      },
    ];
  }
  const invalid = invalidCidrs(ctx.snapshot.preferredSubnets);
  return [
    {
      code: 'DNS_CP_NO_IP_IN_SUBNETS',
      severity: ctx.controllerState === 'fixed' && recordedIps !== null && recordedIps.length > 0 ? 'warning' : 'critical',
      subject: ctx.fqdn,
      summary: `${desired.runningCount} control-plane machine(s) run but none has an ExternalIP in the preferred subnets (${describeSubnets(ctx.snapshot)}): the desired IP set is empty; ${guard}`,
      evidence: {
        fqdn: ctx.fqdn,
        machines,
        preferredSubnets: ctx.snapshot.preferredSubnets,
        preferredSubnetsSource: ctx.snapshot.preferredSubnetsSource,
        ...(invalid.length ? { invalidSubnets: invalid } : {}),
      },
      fix: joinFix([
        ctx.snapshot.preferredSubnetsSource === 'config'
          ? `Fix clusters.${ctx.cluster}.preferredSubnets so it covers the control-plane ExternalIPs`
          : `Fix the ConfigMap maas-preferred-subnet (key preferredSubnets, comma-separated CIDRs) in namespace ${ctx.snapshot.maasClusterRef.namespace} so it covers the control-plane ExternalIPs`,
        invalid.length ? `these entries are not CIDRs and match nothing: ${invalid.map((s) => JSON.stringify(s)).join(', ')}` : null,
        ctx.controllerState === 'fixed' ? null : upgradeText(ctx.controllerState),
      ]),
    },
  ];
}

function recordFindings(ctx: Context): Finding[] {
  const { snapshot, fqdn } = ctx;
  if ('error' in snapshot.dns) {
    return [
      ...hashOnlyFindings(ctx),
      probeFailed(fqdn, `MAAS DNS resource lookup for ${fqdn} failed: ${snapshot.dns.error}`, 'The record is unknown until MAAS answers: fix the cause above and run the check again'),
    ];
  }
  const resources = snapshot.dns.resources;
  if (resources.length === 0) return [...hashOnlyFindings(ctx), missing(ctx)];
  if (resources.length > 1) return [...hashOnlyFindings(ctx), ambiguous(ctx, resources)];
  return singleRecordFindings(ctx, resources[0] as DnsResource);
}

/** When MAAS could not tell us the record, the cached hash still says something. */
function hashOnlyFindings(ctx: Context): Finding[] {
  if (ctx.annotation !== EMPTY_SET_HASH || ctx.desired.existingCount === 0) return [];
  return [emptyHashCached(ctx, null, 'warning')];
}

function missing(ctx: Context): Finding {
  const dns = ctx.snapshot.dns;
  const domainUnknown = 'resources' in dns && dns.domainUnknown === true;
  const domain = ctx.fqdn.slice(ctx.fqdn.indexOf('.') + 1);
  return {
    code: 'DNS_RECORD_MISSING',
    severity: 'critical',
    subject: ctx.fqdn,
    summary: domainUnknown
      ? `MAAS serves no DNS domain "${domain}", so it has no record for ${ctx.fqdn}: the API server name does not resolve through MAAS`
      : `MAAS has no DNS resource for ${ctx.fqdn}: the API server name does not resolve through MAAS`,
    evidence: { fqdn: ctx.fqdn, ...(domainUnknown ? { domainUnknown: domain } : {}), desired: ctx.desired.ips, machines: machinesEvidence(ctx.desired.controlPlane) },
    fix: domainUnknown
      ? `Check the MaasCluster's spec.dnsDomain against the domains MAAS serves, or create the domain "${domain}" in MAAS`
      : 'The controller creates it (with no IPs) on its next MaasCluster reconcile: check that capmaas-controller-manager is running and its logs; someone may have deleted it in MAAS',
  };
}

function ambiguous(ctx: Context, resources: DnsResource[]): Finding {
  return {
    code: 'DNS_RECORD_AMBIGUOUS',
    severity: 'error',
    subject: ctx.fqdn,
    summary: `MAAS holds ${resources.length} DNS resources for ${ctx.fqdn}; the controller refuses to pick one (expected 1 DNS Resource) and so does this check`,
    evidence: {
      fqdn: ctx.fqdn,
      ids: resources.map((r) => r.id),
      records: resources.map((r) => ({ id: r.id, recorded: recordedIpsOf(r) })),
      desired: ctx.desired.ips,
    },
    fix: `Delete the extra DNS resources in MAAS so exactly one remains for ${ctx.fqdn} (ids ${resources.map((r) => r.id).join(', ')})`,
  };
}

function singleRecordFindings(ctx: Context, resource: DnsResource): Finding[] {
  const { desired, fqdn, annotation } = ctx;
  const recorded = recordedIpsOf(resource);
  const findings: Finding[] = [];
  const noControlPlane = desired.existingCount === 0;
  const preserving = desired.ips.length === 0 && !noControlPlane;
  const differs = !sameSet(recorded, desired.ips);
  const gone = goneIps(ctx, recorded);

  if (noControlPlane) findings.push(noControlPlaneFinding(ctx, recorded));

  if (recorded.length === 0 && !noControlPlane && healsWhenCpRuns(ctx)) {
    findings.push(emptyUntilCpRuns(ctx, resource));
  } else if (recorded.length === 0 && !noControlPlane) {
    findings.push({
      code: 'DNS_RECORD_EMPTY',
      severity: 'critical',
      subject: fqdn,
      summary: `MAAS DNS resource ${resource.id} for ${fqdn} holds no A/AAAA record: the API server name resolves to nothing${emptyRecordCause(ctx)}`,
      evidence: { fqdn, resourceId: resource.id, recorded, desired: desired.ips, machines: machinesEvidence(desired.controlPlane) },
      fix: restoreFix(ctx),
    });
  } else if (preserving && desired.runningCount === 0 && recorded.length > 0 && gone.length > 0) {
    findings.push(staleRecords(ctx, resource, recorded, gone));
  } else if (differs && !preserving && recorded.length > 0) {
    const overlap = recorded.some((ip) => desired.ips.includes(ip));
    findings.push({
      code: 'DNS_DRIFT',
      severity: noControlPlane ? 'warning' : overlap ? 'warning' : 'critical',
      subject: fqdn,
      summary: noControlPlane
        ? `MAAS still holds ${recorded.join(', ')} for ${fqdn} although no control-plane machine exists`
        : `MAAS holds ${recorded.join(', ')} for ${fqdn}; the running control plane needs ${desired.ips.join(', ')}`,
      evidence: {
        fqdn,
        resourceId: resource.id,
        recorded,
        desired: desired.ips,
        missing: desired.ips.filter((ip) => !recorded.includes(ip)),
        stale: recorded.filter((ip) => !desired.ips.includes(ip)),
        machines: machinesEvidence(desired.controlPlane),
      },
      fix: noControlPlane
        ? 'The controller clears the record when it next reconciles; nothing answers at those IPs'
        : restoreFix(ctx),
    });
  }

  if (annotation === EMPTY_SET_HASH && !noControlPlane) {
    findings.push(emptyHashCached(ctx, recorded, recorded.length === 0 ? 'critical' : 'warning'));
  }

  if (annotation !== null && desired.ips.length > 0 && desired.hashes.includes(annotation) && differs) {
    findings.push({
      code: 'DNS_HASH_MASKS_DRIFT',
      severity: ctx.controllerState === 'fixed' || ctx.controllerState === 'no-hash-cache' ? 'warning' : 'critical',
      subject: fqdn,
      summary:
        ctx.controllerState === 'fixed'
          ? `The last-applied hash equals the hash of the desired set while MAAS differs; this controller release re-syncs on its next reconcile`
          : ctx.controllerState === 'no-hash-cache'
            ? `The last-applied hash equals the hash of the desired set while MAAS differs, but ${releaseName(ctx)} keeps no hash cache: the annotation is left from another release and masks nothing; the controller PUTs the desired set on its next reconcile`
            : `The last-applied hash equals the hash of the desired set while MAAS differs: an unpatched controller returns before asking MAAS and will never repair ${fqdn}`,
      evidence: { fqdn, annotation, annotationMeaning: meaningOf(ctx), recorded, desired: desired.ips, controller: ctx.controllerEvidence },
      fix: restoreFix(ctx),
    });
  }
  return findings;
}

function noControlPlaneFinding(ctx: Context, recorded: string[]): Finding {
  return {
    code: 'DNS_NO_CONTROL_PLANE',
    severity: 'info',
    subject: ctx.fqdn,
    summary: `No control-plane MaasMachine exists (or every one is being deleted): the controller clears ${ctx.fqdn}, which is expected`,
    evidence: { fqdn: ctx.fqdn, recorded, desired: [], machines: machinesEvidence(ctx.desired.controlPlane), annotation: ctx.annotation },
  };
}

function emptyHashCached(ctx: Context, recorded: string[] | null, severity: Severity): Finding {
  const wiped = recorded !== null && recorded.length === 0;
  // CAPMAAS v4.8.0+ (controllers/maascluster_controller.go reconcileDNSAttachments) returns early only
  // when the desired set's hash equals the cached one, and its MaasCluster reconcile watches MaasMachines.
  if (ctx.controllerState === 'no-hash-cache') return leftoverEmptyHash(ctx, recorded);
  const selfRecovery =
    ctx.controllerState === 'fixed'
      ? guardedSelfRecovery(ctx)
      : ctx.desired.ips.length === 0
      ? 'while no running control-plane machine has an IP the desired set stays empty, its hash equals the cached one, and the controller leaves the record so: it will not self-recover until one does'
      : `the desired set (${ctx.desired.ips.join(', ')}) hashes differently, so the controller re-applies it when it next reconciles (a MaasMachine change triggers one); the record is still empty, so it has not, and a controller that cannot reconcile (one running inside this cluster cannot reach its API server while the name resolves to nothing) will not`;
  return {
    code: 'DNS_EMPTY_HASH_CACHED',
    severity,
    subject: ctx.fqdn,
    summary: wiped
      ? `The MaasCluster's last-applied-dns-hash is SHA-256 of the empty set: the controller applied an empty IP set to ${ctx.fqdn} and cached it${ctx.controllerState === 'vulnerable' ? ` (the PCP-6608 wipe: ${releaseName(ctx)} has no empty-set guard)` : ''}; ${selfRecovery}`
      : `The MaasCluster's last-applied-dns-hash is SHA-256 of the empty set: an empty IP set was applied to ${ctx.fqdn} at some point (PCP-6608 trace)`,
    evidence: {
      ...hashEvidence(ctx, recorded),
      machines: machinesEvidence(ctx.desired.controlPlane),
      controller: ctx.controllerEvidence,
    },
    fix: restoreFix(ctx),
  };
}

function meaningOf(ctx: Context): string {
  const a = ctx.annotation;
  if (a === null) return 'absent: the controller has not applied a set yet, or predates the hash cache (before v4.8.0)';
  if (a === EMPTY_SET_HASH) return 'SHA-256 of the empty set: the last set the controller applied was empty';
  if (ctx.desired.hashes.includes(a)) return `the hash of the desired set (${ctx.desired.ips.join(', ') || 'empty'}): the controller believes MAAS holds it`;
  return 'the hash of some other set: the controller will re-apply the desired set on its next reconcile';
}

function restoreFix(ctx: Context): string {
  const upgrade = ctx.controllerState === 'fixed' ? null : upgradeText(ctx.controllerState);
  if (ctx.desired.ips.length === 0) {
    const waiting = ctx.desired.controlPlane.filter((m) => !m.deleting);
    return joinFix([
      `No running control-plane machine has an IP to restore: bring one back (${names(waiting)}), then run \`/maas fix-dns ${ctx.cluster}\``,
      upgrade,
    ]);
  }
  return joinFix([`\`/maas fix-dns ${ctx.cluster}\` puts ${ctx.desired.ips.join(', ')} back on ${ctx.fqdn} and refreshes the hash`, upgrade]);
}

const UPGRADE_TEXT = `upgrade the controller (cluster-api-provider-maas) to ${FIXED_CONTROLLER_VERSION} or later`;

/** None for a release that caches nothing or has the guard: upgrading is not the step there. */
function upgradeText(state: Context['controllerState'] = 'vulnerable'): string | null {
  if (state === 'no-hash-cache' || state === 'fixed') return null;
  return state === 'vulnerable'
    ? UPGRADE_TEXT
    : `make sure the controller (cluster-api-provider-maas) runs ${FIXED_CONTROLLER_VERSION} or later: earlier releases cache an empty set`;
}

/** What the controller does to the record while no control-plane machine has an IP, by its line. */
function guardText(ctx: Context): string {
  switch (ctx.controllerState) {
    case 'fixed':
      return 'the fixed controller leaves the record as it is';
    case 'no-hash-cache':
      return `${releaseName(ctx)} keeps no hash cache: it empties the record now and fills it again when a control-plane machine runs`;
    case 'vulnerable':
      return `${releaseName(ctx)} PUTs the empty set and caches its hash: the record is wiped and stays wiped (PCP-6608)`;
    default:
      return `an unpatched controller (${VULNERABLE_CONTROLLER_RANGES.join(', ')}) would PUT the empty set and wipe the record now`;
  }
}

function releaseName(ctx: Context): string {
  const r = ctx.release;
  if (!r) return 'the controller';
  return `the controller release ${r.version}${r.upstream ? ' (upstream)' : ''}`;
}

/** A release without the hash cache re-PUTs the running set on every reconcile. */
function healsWhenCpRuns(ctx: Context): boolean {
  return ctx.controllerState === 'no-hash-cache' && ctx.desired.runningCount === 0 && ctx.desired.existingCount > 0;
}

function emptyUntilCpRuns(ctx: Context, resource: DnsResource): Finding {
  const waiting = ctx.desired.controlPlane.filter((m) => !m.deleting);
  return {
    code: 'DNS_RECORD_EMPTY',
    severity: 'warning',
    subject: ctx.fqdn,
    summary: `MAAS DNS resource ${resource.id} for ${ctx.fqdn} holds no A/AAAA record, as expected while no control-plane machine runs: ${releaseName(ctx)} keeps no hash cache and PUTs the running set on every reconcile; it heals when a control-plane machine runs again`,
    evidence: { fqdn: ctx.fqdn, resourceId: resource.id, recorded: [], desired: [], expected: true, healsWhen: 'a control-plane machine runs again', controller: ctx.controllerEvidence, machines: machinesEvidence(ctx.desired.controlPlane) },
    fix: `Bring a control-plane machine back (${names(waiting)}); the controller's next reconcile (the MaasMachine change triggers one) writes its IP, so no DNS repair is needed`,
  };
}

function emptyRecordCause(ctx: Context): string {
  if (ctx.controllerState !== 'no-hash-cache' || ctx.desired.ips.length === 0) return '';
  return `; ${releaseName(ctx)} keeps no hash cache and PUTs the running set on every reconcile, so it has not reconciled since (is capmaas-controller-manager running, and can it reach MAAS?)`;
}

/** Recorded IPs that belong to no control-plane machine still in the cluster. */
function goneIps(ctx: Context, recorded: readonly string[]): string[] {
  const known = new Set(ctx.desired.controlPlane.filter((m) => !m.deleting).flatMap((m) => m.externalIps));
  return recorded.filter((ip) => !known.has(ip));
}

function staleRecords(ctx: Context, resource: DnsResource, recorded: string[], gone: string[]): Finding {
  const waiting = ctx.desired.controlPlane.filter((m) => !m.deleting);
  const why =
    ctx.controllerState === 'fixed'
      ? `${releaseName(ctx)} keeps the records while a control-plane machine exists but none runs, so they stay until one does`
      : 'the controller writes the running set only once a control-plane machine runs';
  return {
    code: 'DNS_DRIFT',
    severity: 'critical',
    subject: ctx.fqdn,
    summary: `MAAS holds ${recorded.join(', ')} for ${ctx.fqdn}: stale, ${gone.join(', ')} ${gone.length === 1 ? 'is the address' : 'are the addresses'} of no control-plane machine still in the cluster; ${why}`,
    evidence: {
      fqdn: ctx.fqdn,
      resourceId: resource.id,
      recorded,
      desired: [],
      missing: [],
      stale: gone,
      controller: ctx.controllerEvidence,
      machines: machinesEvidence(ctx.desired.controlPlane),
    },
    fix: joinFix([
      `Bring a control-plane machine up (${names(waiting)}): once it runs the controller writes its IP over the stale records`,
      'until then the API name points at machines that are gone (their addresses may be reused by other hosts)',
    ]),
  };
}

/** The guarded line caches the empty set only when no control-plane machine exists. */
function guardedSelfRecovery(ctx: Context): string {
  return ctx.desired.ips.length === 0
    ? `${releaseName(ctx)} caches the empty set only when no control-plane machine exists (or the hash is from before an upgrade), and keeps the record while one exists; it fills the record when one runs`
    : `the desired set (${ctx.desired.ips.join(', ')}) hashes differently, so ${releaseName(ctx)} re-applies it on its next reconcile (a MaasMachine change triggers one); the record is still empty, so it has not reconciled since`;
}

/** What every finding about the cached hash shows: the annotation, what it means, and the record against the desired IPs. */
function hashEvidence(ctx: Context, recorded: string[] | null) {
  return {
    fqdn: ctx.fqdn,
    annotation: ctx.annotation,
    annotationKey: LAST_APPLIED_DNS_HASH_ANNOTATION,
    annotationMeaning: meaningOf(ctx),
    recorded,
    desired: ctx.desired.ips,
  };
}

/** The empty-set hash beside a release that never reads it: a trace of an earlier release. */
function leftoverEmptyHash(ctx: Context, recorded: string[] | null): Finding {
  return {
    code: 'DNS_EMPTY_HASH_CACHED',
    severity: 'info',
    subject: ctx.fqdn,
    summary: `The MaasCluster's last-applied-dns-hash is SHA-256 of the empty set, left by an earlier release with the hash cache; ${releaseName(ctx)} keeps no hash cache and ignores it`,
    evidence: {
      ...hashEvidence(ctx, recorded),
      controller: ctx.controllerEvidence,
    },
  };
}

function joinFix(parts: (string | null)[]): string {
  return parts.filter((p): p is string => Boolean(p)).join('; ');
}

function recordedOf(ctx: Context): string[] | null {
  const dns = ctx.snapshot.dns;
  if ('error' in dns || dns.resources.length !== 1) return null;
  return recordedIpsOf(dns.resources[0] as DnsResource);
}

/** The controller's view of the record: non-empty IPs as a set. */
export function recordedIpsOf(resource: DnsResource): string[] {
  const ips = resource.ip_addresses.map((a) => a.ip).filter((ip) => typeof ip === 'string' && ip !== '');
  return [...new Set(ips)].sort(compareStrings);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

function machinesEvidence(machines: ControlPlaneMachine[]): Record<string, unknown>[] {
  return machines.map((m) => ({
    name: m.name,
    systemId: m.systemId,
    state: m.state,
    powered: m.powered,
    running: m.running,
    deleting: m.deleting,
    ip: m.ip,
    ...(m.ip === null && m.externalIps.length ? { externalIps: m.externalIps } : {}),
  }));
}

function names(machines: ControlPlaneMachine[]): string {
  return machines.map((m) => m.name).join(', ');
}

function describeSubnets(snapshot: DnsSnapshot): string {
  const list = snapshot.preferredSubnets?.map((s) => JSON.stringify(s)).join(', ') ?? 'none';
  return `${list} from ${snapshot.preferredSubnetsSource === 'config' ? 'the config' : 'ConfigMap maas-preferred-subnet'}`;
}

/** What the verdict may say beyond the findings: the record as read, and the controller's line (null: unknown). */
export interface VerdictContext {
  fqdn?: string | null;
  recorded?: string[];
  line?: ControllerLine | null;
}

/** The one line a person reads first. */
export function dnsVerdict(findings: readonly Finding[], seen: VerdictContext = {}): string {
  const has = (code: string) => findings.some((f) => f.code === code);
  const find = (code: string) => findings.find((f) => f.code === code);
  if (has('DNS_NOT_MANAGED')) return 'API DNS not managed by the controller (custom-dns-provided): nothing to check';
  const empty = find('DNS_RECORD_EMPTY');
  if (empty && empty.evidence.expected === true) {
    return 'API record empty while no control-plane machine runs: expected with a controller that keeps no hash cache; it heals when one runs again';
  }
  const cached = find('DNS_EMPTY_HASH_CACHED');
  if (empty && cached && cached.severity !== 'info') {
    const desired = (cached.evidence as { desired?: string[] }).desired ?? [];
    return desired.length === 0
      ? 'API record WIPED, empty-set hash cached: no running control-plane machine has an IP, so the controller keeps it empty'
      : 'API record WIPED, empty-set hash cached: the controller re-applies it only when it reconciles again, and has not';
  }
  if (empty) return `API record WIPED: ${empty.subject} resolves to nothing`;
  if (has('DNS_RECORD_MISSING')) return `API record MISSING: MAAS has no DNS resource for ${find('DNS_RECORD_MISSING')?.subject}`;
  if (has('DNS_RECORD_AMBIGUOUS')) return `API record AMBIGUOUS: several MAAS DNS resources for ${find('DNS_RECORD_AMBIGUOUS')?.subject}, none picked`;
  if (has('DNS_HASH_MASKS_DRIFT')) return 'API record DRIFTED and hidden by the hash cache: an unpatched controller will not repair it';
  const drift = find('DNS_DRIFT');
  if (drift && drift.severity !== 'info') {
    const e = drift.evidence as { recorded?: string[]; desired?: string[]; stale?: string[] };
    if (e.desired?.length === 0 && e.stale?.length && !has('DNS_NO_CONTROL_PLANE')) {
      return `API record STALE: MAAS holds ${e.recorded?.join(', ')}, ${e.stale.length === 1 ? 'the address' : 'addresses'} of no control-plane machine still in the cluster; it stays until one runs`;
    }
    return `API record DRIFTED: MAAS holds ${e.recorded?.join(', ')}, the control plane needs ${e.desired?.join(', ') || 'nothing'}`;
  }
  const probe = find('PROBE_FAILED');
  if (probe) return `Could not check: ${firstSentence(String(probe.evidence.reason))}`;
  if (has('DNS_CP_NOT_RUNNING')) return `No control-plane machine runs: ${recordRiskWhileNoCpRuns(seen)}`;
  if (has('DNS_CP_NO_IP_IN_SUBNETS')) return 'Control plane runs but has no IP in the preferred subnets: the API record is not maintained';
  if (cached && cached.severity !== 'info') return 'API record healthy now, but the empty-set hash is cached: a wipe happened before';
  if (has('DNS_CONTROLLER_VULNERABLE')) return 'API record healthy; the controller release is vulnerable to the DNS wipe (PCP-6608)';
  if (has('DNS_NO_CONTROL_PLANE')) return 'No control-plane machine: an empty API record is expected';
  const where = seen.fqdn ? `: ${seen.fqdn}${seen.recorded ? ` → ${seen.recorded.join(', ')}` : ''}` : '';
  return `API record healthy${where}`;
}

/**
 * What happens to the record while no control-plane machine runs depends on the controller line
 * (spectrocloud/cluster-api-provider-maas, controllers/maascluster_controller.go
 * reconcileDNSAttachments): v4.9.2-spectro returns early, keeping the records, while a
 * control-plane machine exists (existingCPCount > 0); v4.8.0–v4.9.1 PUT the empty set and cache its
 * hash; releases without the hash cache PUT the running set on every reconcile.
 */
function recordRiskWhileNoCpRuns(seen: VerdictContext): string {
  const held = seen.recorded?.length ? ` (${seen.recorded.join(', ')})` : '';
  switch (seen.line) {
    case 'guarded-hash-cache':
      return `the guarded controller (${FIXED_CONTROLLER_VERSION}+) keeps the API record${held}: no wipe, but the records go stale if that machine does not come back`;
    case 'no-hash-cache':
      return 'the controller keeps no hash cache: it empties the API record on its next reconcile, and the record heals when a control-plane machine runs again';
    case 'unguarded-hash-cache':
      return 'the API record is at risk of being wiped for good (this controller release has no empty-set guard, PCP-6608)';
    default:
      return `the API record is at risk of being wiped (if the controller is unguarded, ${VULNERABLE_CONTROLLER_RANGES.join(', ')})`;
  }
}

/** A reason's first sentence: the hint after it belongs in the finding, not the verdict. */
function firstSentence(text: string): string {
  const end = text.search(/\.\s+[A-Z]/);
  return end < 0 ? text : text.slice(0, end);
}
