import { describe, expect, it } from 'vitest';
import { computeDesiredSet, dnsHash, EMPTY_SET_HASH, evaluateDns, type DnsSnapshot } from '../../../src/features/dns/evaluate.ts';
import { maasClusterObject, maasMachineObject } from '../../../lab/kube-sim/scenario.ts';
import type { MaasMachineObject } from '../../../src/adapters/kube/types.ts';
import type { DnsResource } from '../../../src/adapters/maas/types.ts';
import { statusOf, type Finding } from '../../../src/core/report.ts';

const FQDN = 'prod-k8s.maas.example';
const IP = '10.11.135.36';
const VULNERABLE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v4.9.1-spectro';
const FIXED = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v4.9.2-spectro';
/** Upstream images carry the bare release (Makefile IMG_TAG ?= v0.6.1); v4.7 is the last Palette line without the hash cache. */
const UPSTREAM = 'gcr.io/spectro-dev-public/release/cluster-api/cluster-api-provider-maas-controller:v0.6.1';
const PALETTE_NO_CACHE = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v0.6.1-spectro-4.7.18';
const IP2 = '10.11.135.37';
const VULNERABLE_48 = 'gcr.io/spectro-images-public/release/cluster-api-provider-maas/cluster-api-provider-maas-controller:v0.6.1-spectro-4.8.3';

type MachineOpts = Partial<Parameters<typeof maasMachineObject>[0]>;
const cp = (name: string, o: MachineOpts = {}) =>
  maasMachineObject({ name, cluster: 'prod', controlPlane: true, systemId: `${name}-id`, externalIps: [IP], ...o });
const worker = (name: string, o: MachineOpts = {}) =>
  maasMachineObject({ name, cluster: 'prod', systemId: `${name}-id`, externalIps: ['10.11.135.41'], ...o });

const record = (ips: string[], id = 41): DnsResource => ({ id, fqdn: FQDN, address_ttl: 10, ip_addresses: ips.map((ip) => ({ ip })) });

interface SnapOpts {
  machines: MaasMachineObject[];
  annotation?: string | null;
  dns?: DnsSnapshot['dns'];
  subnets?: string[] | null;
  subnetSource?: DnsSnapshot['preferredSubnetsSource'];
  controller?: string;
  customDns?: boolean;
  noMaasCluster?: boolean;
}

function snap(o: SnapOpts): DnsSnapshot {
  const maasCluster = maasClusterObject({
    name: 'prod',
    fqdn: FQDN,
    ...(o.annotation ? { lastAppliedHash: o.annotation } : {}),
    ...(o.customDns ? { customDns: true } : {}),
  });
  return {
    cluster: 'prod',
    maasClusterRef: { namespace: 'default', name: 'prod' },
    maasCluster: o.noMaasCluster ? null : maasCluster,
    machines: o.machines,
    preferredSubnets: o.subnets ?? null,
    preferredSubnetsSource: o.subnetSource ?? (o.subnets ? 'configmap' : 'none'),
    dns: o.dns ?? { resources: [record([IP])] },
    ...(o.controller ? { controller: { image: o.controller } } : {}),
  };
}

interface Row {
  name: string;
  snapshot: DnsSnapshot;
  codes: string[];
  status: 'ok' | 'warning' | 'critical' | 'error';
  verdict?: RegExp;
  check?: (findings: Finding[]) => void;
}

const byCode = (findings: Finding[], code: string) => {
  const f = findings.find((x) => x.code === code);
  if (!f) throw new Error(`no ${code} in ${findings.map((x) => x.code).join(', ')}`);
  return f;
};

const rows: Row[] = [
  // --- the seed's test list (TestReconcileDNSAttachments) ---
  {
    name: 'CP powered off → record preserved, not drift',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], annotation: dnsHash([IP]) }),
    codes: ['DNS_CP_NOT_RUNNING'],
    status: 'critical',
    verdict: /No control-plane machine runs/,
    check: (f) => {
      const finding = byCode(f, 'DNS_CP_NOT_RUNNING');
      expect(finding.evidence.machines).toEqual([expect.objectContaining({ name: 'cp-0', powered: false, running: false, state: 'Deployed', ip: IP })]);
      expect(finding.summary).toMatch(/unpatched controller .* would PUT the empty set/);
      expect(finding.fix).toMatch(/Leave the DNS record as it is/);
    },
  },
  {
    name: 'no CP machines, record cleared → clearing expected',
    snapshot: snap({ machines: [worker('w-0')], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] } }),
    codes: ['DNS_NO_CONTROL_PLANE'],
    status: 'ok',
    verdict: /empty API record is expected/,
  },
  {
    name: 'no CP machines, record not cleared yet → drift (warning)',
    snapshot: snap({ machines: [worker('w-0')], annotation: dnsHash([IP]) }),
    codes: ['DNS_NO_CONTROL_PLANE', 'DNS_DRIFT'],
    status: 'warning',
    check: (f) => expect(byCode(f, 'DNS_DRIFT').evidence).toMatchObject({ recorded: [IP], desired: [], stale: [IP] }),
  },
  {
    name: 'only CP has a deletionTimestamp → counts as absent, clearing expected',
    snapshot: snap({ machines: [cp('cp-0', { deleting: true })], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] } }),
    codes: ['DNS_NO_CONTROL_PLANE'],
    status: 'ok',
    check: (f) => expect(byCode(f, 'DNS_NO_CONTROL_PLANE').evidence.machines).toEqual([expect.objectContaining({ name: 'cp-0', deleting: true })]),
  },
  {
    name: 'deleting CP beside a running one → only the running IP is desired',
    snapshot: snap({
      machines: [cp('cp-old', { deleting: true, externalIps: ['10.11.135.30'] }), cp('cp-new')],
      annotation: dnsHash(['10.11.135.30']),
      dns: { resources: [record(['10.11.135.30'])] },
    }),
    codes: ['DNS_DRIFT'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_DRIFT').evidence).toMatchObject({ recorded: ['10.11.135.30'], desired: [IP], missing: [IP], stale: ['10.11.135.30'] }),
  },
  {
    name: 'CP running without an ExternalIP → preserved, reported',
    snapshot: snap({ machines: [cp('cp-0', { externalIps: [], internalIps: ['192.168.1.5'] })], annotation: dnsHash([IP]) }),
    codes: ['DNS_CP_NO_IP_IN_SUBNETS'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_CP_NO_IP_IN_SUBNETS').evidence).toMatchObject({ preferredSubnets: null, machines: [expect.objectContaining({ running: true, ip: null })] }),
  },
  {
    name: 'no prior annotation, MAAS in sync → healthy',
    snapshot: snap({ machines: [cp('cp-0')], annotation: null }),
    codes: [],
    status: 'ok',
    verdict: /^API record healthy: prod-k8s\.maas\.example → 10\.11\.135\.36$/,
  },
  {
    name: 'no prior annotation, MAAS empty → wiped, no hash finding',
    snapshot: snap({ machines: [cp('cp-0')], annotation: null, dns: { resources: [record([])] } }),
    codes: ['DNS_RECORD_EMPTY'],
    status: 'critical',
    verdict: /^API record WIPED: prod-k8s\.maas\.example resolves to nothing$/,
  },
  {
    name: 'hash match + MAAS in sync → healthy',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]) }),
    codes: [],
    status: 'ok',
  },
  {
    name: 'hash match + MAAS drifted → drift masked by the hash (unknown controller: critical)',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), dns: { resources: [record(['10.11.135.99'])] } }),
    codes: ['DNS_DRIFT', 'DNS_HASH_MASKS_DRIFT'],
    status: 'critical',
    verdict: /DRIFTED and hidden by the hash cache/,
    check: (f) => {
      const masks = byCode(f, 'DNS_HASH_MASKS_DRIFT');
      expect(masks.evidence).toMatchObject({ annotation: dnsHash([IP]), recorded: ['10.11.135.99'], desired: [IP] });
      expect(masks.fix).toContain('/maas fix-dns prod');
    },
  },
  {
    name: 'hash match + MAAS wiped by hand → empty and masked',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), dns: { resources: [record([])] } }),
    codes: ['DNS_RECORD_EMPTY', 'DNS_HASH_MASKS_DRIFT'],
    status: 'critical',
  },
  {
    name: 'DNS resource lookup error → PROBE_FAILED, never healthy',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), dns: { error: 'MAAS region-a at http://127.0.0.1:9/MAAS is unreachable: connect ECONNREFUSED. Check that the MAAS region is up' } }),
    codes: ['PROBE_FAILED'],
    status: 'error',
    verdict: /^Could not check: MAAS DNS resource lookup for prod-k8s\.maas\.example failed: MAAS region-a at http:\/\/127\.0\.0\.1:9\/MAAS is unreachable: connect ECONNREFUSED$/,
  },
  {
    name: 'DNS lookup error with the empty hash cached → both said',
    snapshot: snap({ machines: [cp('cp-0')], annotation: EMPTY_SET_HASH, dns: { error: 'timeout' } }),
    codes: ['DNS_EMPTY_HASH_CACHED', 'PROBE_FAILED'],
    status: 'error',
  },
  // --- the incident ---
  {
    name: 'PCP-6608: CP back, record empty, empty-set hash cached, vulnerable controller',
    snapshot: snap({ machines: [cp('cp-0'), worker('w-0')], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] }, controller: VULNERABLE }),
    codes: ['DNS_CONTROLLER_VULNERABLE', 'DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED'],
    status: 'critical',
    verdict: /^API record WIPED, empty-set hash cached: the controller re-applies it only when it reconciles again, and has not$/,
    check: (f) => {
      expect(byCode(f, 'DNS_RECORD_EMPTY').evidence).toMatchObject({ fqdn: FQDN, recorded: [], desired: [IP] });
      expect(byCode(f, 'DNS_RECORD_EMPTY').fix).toBe(
        '`/maas fix-dns prod` puts 10.11.135.36 back on prod-k8s.maas.example and refreshes the hash; upgrade the controller (cluster-api-provider-maas) to v4.9.2 or later',
      );
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').severity).toBe('critical');
      // CAPMAAS re-PUTs when the desired set's hash differs from the cached one: recovery hangs on a reconcile.
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).toMatch(/the desired set \(10\.11\.135\.36\) hashes differently, so the controller re-applies it when it next reconciles .*; the record is still empty, so it has not/);
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').evidence).toMatchObject({ annotation: EMPTY_SET_HASH, annotationMeaning: expect.stringMatching(/empty set/) });
      expect(byCode(f, 'DNS_CONTROLLER_VULNERABLE')).toMatchObject({ severity: 'warning', evidence: { version: 'v4.9.1', fixedIn: 'v4.9.2' } });
    },
  },
  {
    name: 'PCP-6608 during the flap: CP off, record empty, empty hash cached',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] } }),
    codes: ['DNS_CP_NOT_RUNNING', 'DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED'],
    status: 'critical',
    verdict: /^API record WIPED, empty-set hash cached: no running control-plane machine has an IP, so the controller keeps it empty$/,
    check: (f) => {
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).toMatch(/the desired set stays empty, its hash equals the cached one, and the controller leaves the record so: it will not self-recover until one does$/);
      expect(byCode(f, 'DNS_RECORD_EMPTY').fix).toMatch(/^No running control-plane machine has an IP to restore: bring one back \(cp-0\), then run `\/maas fix-dns prod`/);
    },
  },
  {
    name: 'no CP machines, stale IPs kept behind a cached empty-set hash → drift warning only',
    snapshot: snap({ machines: [worker('w-0')], annotation: EMPTY_SET_HASH }),
    codes: ['DNS_NO_CONTROL_PLANE', 'DNS_DRIFT'],
    status: 'warning',
  },
  {
    name: 'empty hash cached but the record was restored by hand → warning trace',
    snapshot: snap({ machines: [cp('cp-0')], annotation: EMPTY_SET_HASH }),
    codes: ['DNS_EMPTY_HASH_CACHED'],
    status: 'warning',
    verdict: /empty-set hash is cached/,
  },
  // --- the three controller lines ---
  {
    name: 'no hash cache (upstream v0.x): CP off, record empty → expected, heals when one runs',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], dns: { resources: [record([])] }, controller: UPSTREAM }),
    codes: ['DNS_CP_NOT_RUNNING', 'DNS_RECORD_EMPTY'],
    status: 'critical',
    verdict: /^API record empty while no control-plane machine runs: expected with a controller that keeps no hash cache; it heals when one runs again$/,
    check: (f) => {
      expect(byCode(f, 'DNS_RECORD_EMPTY')).toMatchObject({ severity: 'warning', evidence: { expected: true, healsWhen: 'a control-plane machine runs again' } });
      expect(byCode(f, 'DNS_RECORD_EMPTY').summary).toMatch(/v0\.6\.1 \(upstream\) keeps no hash cache/);
      expect(byCode(f, 'DNS_CP_NOT_RUNNING').summary).toMatch(/keeps no hash cache: it empties the record now and fills it again when a control-plane machine runs/);
      expect(f.every((x) => !x.fix?.includes('fix-dns') && !x.fix?.includes('upgrade'))).toBe(true);
    },
  },
  {
    name: 'no hash cache (Palette v4.7): CP runs, record empty → the controller has not reconciled; fix-dns',
    snapshot: snap({ machines: [cp('cp-0')], dns: { resources: [record([])] }, controller: PALETTE_NO_CACHE }),
    codes: ['DNS_RECORD_EMPTY'],
    status: 'critical',
    verdict: /^API record WIPED/,
    check: (f) => {
      expect(byCode(f, 'DNS_RECORD_EMPTY').summary).toMatch(/v4\.7\.18 keeps no hash cache and PUTs the running set on every reconcile, so it has not reconciled since/);
      expect(byCode(f, 'DNS_RECORD_EMPTY').fix).toBe('`/maas fix-dns prod` puts 10.11.135.36 back on prod-k8s.maas.example and refreshes the hash');
    },
  },
  {
    name: 'no hash cache: an empty-set hash left by an earlier release is only a note',
    snapshot: snap({ machines: [cp('cp-0')], annotation: EMPTY_SET_HASH, controller: UPSTREAM }),
    codes: ['DNS_EMPTY_HASH_CACHED'],
    status: 'ok',
    verdict: /^API record healthy/,
    check: (f) => expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).toMatch(/left by an earlier release .* ignores it/),
  },
  {
    name: 'unguarded hash cache (v4.9.1): the cached empty set is the PCP-6608 wipe; fix-dns is the step',
    snapshot: snap({ machines: [cp('cp-0')], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] }, controller: VULNERABLE }),
    codes: ['DNS_CONTROLLER_VULNERABLE', 'DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED'],
    status: 'critical',
    check: (f) => {
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).toMatch(/\(the PCP-6608 wipe: the controller release v4\.9\.1 has no empty-set guard\)/);
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').fix).toMatch(/^`\/maas fix-dns prod` puts 10\.11\.135\.36 back/);
    },
  },
  {
    name: 'unguarded hash cache: CP off → the release PUTs the empty set and the wipe sticks',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], annotation: dnsHash([IP]), controller: VULNERABLE }),
    codes: ['DNS_CONTROLLER_VULNERABLE', 'DNS_CP_NOT_RUNNING'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_CP_NOT_RUNNING').summary).toMatch(/v4\.9\.1 PUTs the empty set and caches its hash: the record is wiped and stays wiped/),
  },
  {
    name: 'unguarded hash cache (v4.8.x): CP off → the verdict names the wipe risk',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], annotation: dnsHash([IP]), controller: VULNERABLE_48 }),
    codes: ['DNS_CONTROLLER_VULNERABLE', 'DNS_CP_NOT_RUNNING'],
    status: 'critical',
    verdict: /^No control-plane machine runs: the API record is at risk of being wiped for good \(this controller release has no empty-set guard, PCP-6608\)$/,
  },
  {
    name: 'guarded (v4.9.2): CP off, its record kept → the guard at work, no record finding',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], annotation: dnsHash([IP]), controller: FIXED }),
    codes: ['DNS_CP_NOT_RUNNING'],
    status: 'critical',
    verdict: /^No control-plane machine runs: the guarded controller \(v4\.9\.2\+\) keeps the API record \(10\.11\.135\.36\): no wipe, but the records go stale if that machine does not come back$/,
    check: (f) => expect(byCode(f, 'DNS_CP_NOT_RUNNING').summary).toMatch(/the fixed controller leaves the record as it is/),
  },
  {
    name: 'no hash cache (upstream v0.x): CP off, record not emptied yet → the verdict says it heals when a CP runs',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], controller: UPSTREAM }),
    codes: ['DNS_CP_NOT_RUNNING'],
    status: 'critical',
    verdict: /^No control-plane machine runs: the controller keeps no hash cache: it empties the API record on its next reconcile, and the record heals when a control-plane machine runs again$/,
  },
  {
    name: 'guarded: an empty-set hash beside a running control plane is re-applied on the next reconcile',
    snapshot: snap({ machines: [cp('cp-0')], annotation: EMPTY_SET_HASH, dns: { resources: [record([])] }, controller: FIXED }),
    codes: ['DNS_RECORD_EMPTY', 'DNS_EMPTY_HASH_CACHED'],
    status: 'critical',
    check: (f) => {
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).toMatch(/hashes differently, so the controller release v4\.9\.2 re-applies it on its next reconcile .*; the record is still empty, so it has not reconciled since$/);
      expect(byCode(f, 'DNS_EMPTY_HASH_CACHED').summary).not.toMatch(/PCP-6608 wipe/);
      expect(f.every((x) => !x.fix?.includes('upgrade'))).toBe(true);
    },
  },
  {
    name: 'guarded: CP replaced, the new one not running yet → records STALE, pointing at the machine that left',
    snapshot: snap({
      machines: [cp('cp-old', { deleting: true }), cp('cp-new', { powered: false, externalIps: [IP2] })],
      annotation: dnsHash([IP]),
      controller: FIXED,
    }),
    codes: ['DNS_CP_NOT_RUNNING', 'DNS_DRIFT'],
    status: 'critical',
    verdict: /^API record STALE: MAAS holds 10\.11\.135\.36, the address of no control-plane machine still in the cluster; it stays until one runs$/,
    check: (f) => {
      const drift = byCode(f, 'DNS_DRIFT');
      expect(drift).toMatchObject({ severity: 'critical', evidence: { recorded: [IP], desired: [], stale: [IP] } });
      expect(drift.summary).toMatch(/v4\.9\.2 keeps the records while a control-plane machine exists but none runs/);
      expect(drift.fix).toMatch(/^Bring a control-plane machine up \(cp-new\)/);
    },
  },
  // --- beyond the seed ---
  {
    name: 'duplicate IPs: deduplicated; the unpatched hash (with duplicates) is recognised',
    snapshot: snap({ machines: [cp('cp-0'), cp('cp-1')], annotation: dnsHash([IP, IP]), dns: { resources: [record(['10.11.135.99'])] } }),
    codes: ['DNS_DRIFT', 'DNS_HASH_MASKS_DRIFT'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_DRIFT').evidence.desired).toEqual([IP]),
  },
  {
    name: 'duplicate IPs recorded by MAAS count once',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), dns: { resources: [record([IP, IP, ''])] } }),
    codes: [],
    status: 'ok',
  },
  {
    name: 'IPv6 control plane inside an IPv6 preferred subnet',
    snapshot: snap({
      machines: [cp('cp-0'), cp('cp-1', { externalIps: ['2001:db8::10'] })],
      subnets: ['10.11.135.0/24', '2001:db8::/64'],
      annotation: 'a4f8e6989c514e96f45b7946599e12bc95f2b11441ca5070e3fa4bdef661151b',
      dns: { resources: [record(['2001:db8::10', IP])] },
    }),
    codes: [],
    status: 'ok',
  },
  {
    name: 'IPv6: the cached hash of the v4+v6 set is recognised when MAAS lost the v6 record',
    snapshot: snap({
      machines: [cp('cp-0'), cp('cp-1', { externalIps: ['2001:db8::10'] })],
      subnets: ['10.11.135.0/24', '2001:db8::/64'],
      annotation: 'a4f8e6989c514e96f45b7946599e12bc95f2b11441ca5070e3fa4bdef661151b',
      dns: { resources: [record([IP])] },
    }),
    codes: ['DNS_DRIFT', 'DNS_HASH_MASKS_DRIFT'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_DRIFT').evidence).toMatchObject({ desired: [IP, '2001:db8::10'], missing: ['2001:db8::10'], stale: [] }),
  },
  {
    name: 'IPs sorted as strings, not numbers (…10 before …9)',
    snapshot: snap({
      machines: [cp('cp-0', { externalIps: ['10.11.135.9'] }), cp('cp-1', { externalIps: ['10.11.135.10'] })],
      annotation: 'f6c10fadf6e84d75a72b701f76b070b6d9e752acc99334e72bf9352a84273200',
      dns: { resources: [record(['10.11.135.7'])] },
    }),
    codes: ['DNS_DRIFT', 'DNS_HASH_MASKS_DRIFT'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_DRIFT').evidence.desired).toEqual(['10.11.135.10', '10.11.135.9']),
  },
  {
    name: 'several DNS resources for one FQDN → ambiguous, no guess',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), dns: { resources: [record([IP], 41), record([], 57)] } }),
    codes: ['DNS_RECORD_AMBIGUOUS'],
    status: 'error',
    verdict: /AMBIGUOUS/,
    check: (f) => expect(byCode(f, 'DNS_RECORD_AMBIGUOUS').evidence).toMatchObject({ fqdn: FQDN, ids: [41, 57] }),
  },
  {
    name: 'no DNS resource at all → missing',
    snapshot: snap({ machines: [cp('cp-0')], dns: { resources: [] } }),
    codes: ['DNS_RECORD_MISSING'],
    status: 'critical',
    verdict: /MISSING/,
  },
  {
    name: 'MAAS serves no such domain → missing, saying so',
    snapshot: snap({ machines: [cp('cp-0')], dns: { resources: [], domainUnknown: true } }),
    codes: ['DNS_RECORD_MISSING'],
    status: 'critical',
    check: (f) => {
      expect(byCode(f, 'DNS_RECORD_MISSING').evidence).toMatchObject({ fqdn: FQDN, domainUnknown: 'maas.example' });
      expect(byCode(f, 'DNS_RECORD_MISSING').fix).toMatch(/spec\.dnsDomain/);
    },
  },
  {
    name: 'custom-dns-provided → not managed, not broken',
    snapshot: snap({ machines: [cp('cp-0', { powered: false })], customDns: true, dns: { resources: [] }, controller: VULNERABLE }),
    codes: ['DNS_NOT_MANAGED'],
    status: 'ok',
    verdict: /not managed/,
  },
  {
    name: 'missing MaasCluster → PROBE_FAILED naming it',
    snapshot: snap({ machines: [], noMaasCluster: true }),
    codes: ['PROBE_FAILED'],
    status: 'error',
    verdict: /no MaasCluster "prod" in namespace "default"/,
  },
  {
    name: 'preferred subnets exclude every CP IP',
    snapshot: snap({ machines: [cp('cp-0')], subnets: ['10.20.0.0/24'], annotation: dnsHash([IP]) }),
    codes: ['DNS_CP_NO_IP_IN_SUBNETS'],
    status: 'critical',
    check: (f) => {
      const finding = byCode(f, 'DNS_CP_NO_IP_IN_SUBNETS');
      expect(finding.evidence).toMatchObject({ preferredSubnets: ['10.20.0.0/24'], machines: [expect.objectContaining({ ip: null, externalIps: [IP] })] });
      expect(finding.fix).toMatch(/ConfigMap maas-preferred-subnet .* namespace default/);
    },
  },
  {
    name: 'ConfigMap with an empty preferredSubnets value filters everything out (as the controller does)',
    snapshot: snap({ machines: [cp('cp-0')], subnets: [''], annotation: dnsHash([IP]) }),
    codes: ['DNS_CP_NO_IP_IN_SUBNETS'],
    status: 'critical',
    check: (f) => expect(byCode(f, 'DNS_CP_NO_IP_IN_SUBNETS').evidence.invalidSubnets).toEqual(['']),
  },
  {
    name: 'fixed controller: masked drift is only a warning',
    snapshot: snap({ machines: [cp('cp-0'), cp('cp-1', { externalIps: ['10.11.135.37'] })], annotation: dnsHash([IP, '10.11.135.37']), dns: { resources: [record([IP])] }, controller: FIXED }),
    codes: ['DNS_DRIFT', 'DNS_HASH_MASKS_DRIFT'],
    status: 'warning',
    check: (f) => expect(f.every((x) => !x.fix?.includes('upgrade'))).toBe(true),
  },
  {
    name: 'partial drift (one IP missing, none stale) → warning',
    snapshot: snap({ machines: [cp('cp-0'), cp('cp-1', { externalIps: ['10.11.135.37'] })], annotation: 'not-a-known-hash', dns: { resources: [record([IP])] } }),
    codes: ['DNS_DRIFT'],
    status: 'warning',
  },
  {
    name: 'healthy record, vulnerable controller → warning only',
    snapshot: snap({ machines: [cp('cp-0')], annotation: dnsHash([IP]), controller: VULNERABLE }),
    codes: ['DNS_CONTROLLER_VULNERABLE'],
    status: 'warning',
    verdict: /healthy; the controller release is vulnerable/,
  },
  {
    name: 'machine in Deploying counts as running; Allocated does not',
    snapshot: snap({ machines: [cp('cp-0', { state: 'Deploying' }), cp('cp-1', { state: 'Allocated', externalIps: ['10.11.135.37'] })], annotation: dnsHash([IP]) }),
    codes: [],
    status: 'ok',
  },
];

/** docs/findings.md: evidence keys each code carries at least. */
const contractKeys: Record<string, string[]> = {
  DNS_RECORD_MISSING: ['fqdn'],
  DNS_RECORD_AMBIGUOUS: ['fqdn', 'ids'],
  DNS_RECORD_EMPTY: ['fqdn', 'recorded', 'desired'],
  DNS_EMPTY_HASH_CACHED: ['annotation'],
  DNS_DRIFT: ['fqdn', 'recorded', 'desired'],
  DNS_HASH_MASKS_DRIFT: ['annotation', 'recorded', 'desired'],
  DNS_CP_NOT_RUNNING: ['machines'],
  DNS_CP_NO_IP_IN_SUBNETS: ['machines', 'preferredSubnets'],
  PROBE_FAILED: ['reason'],
};

describe('evaluateDns', () => {
  it.each(rows)('$name', (row) => {
    const { findings, verdict } = evaluateDns(row.snapshot);
    expect(findings.map((f) => f.code).sort()).toEqual([...row.codes].sort());
    expect(statusOf(findings)).toBe(row.status);
    if (row.verdict) expect(verdict).toMatch(row.verdict);
    for (const f of findings) {
      for (const key of contractKeys[f.code] ?? []) expect(f.evidence, `${f.code}.${key}`).toHaveProperty(key);
      expect(f.summary.length).toBeGreaterThan(10);
      expect(`${f.summary} ${f.fix ?? ''}`).not.toMatch(/puts\s+back|\(\)|undefined|null/);
    }
    row.check?.(findings);
  });

  it('never calls a failed or missing lookup healthy', () => {
    for (const row of rows.filter((r) => 'error' in r.snapshot.dns || r.snapshot.maasCluster === null)) {
      expect(evaluateDns(row.snapshot).verdict).not.toMatch(/healthy/);
    }
  });
});

describe('computeDesiredSet', () => {
  it('takes the first ExternalIP inside a preferred subnet, skipping InternalIPs', () => {
    const m = cp('cp-0', { externalIps: ['192.0.2.7', IP], internalIps: ['10.11.135.200'] });
    expect(computeDesiredSet([m], ['10.11.135.0/24']).ips).toEqual([IP]);
    expect(computeDesiredSet([m], null).ips).toEqual(['192.0.2.7']);
  });

  it('ignores machines without the control-plane label, whatever its value', () => {
    const labelled = cp('cp-0');
    labelled.metadata.labels = { ...labelled.metadata.labels, 'cluster.x-k8s.io/control-plane': 'anything' };
    const set = computeDesiredSet([labelled, worker('w-0')], null);
    expect(set.controlPlane.map((m) => m.name)).toEqual(['cp-0']);
  });

  it('treats a missing machineState as not running', () => {
    const m = cp('cp-0');
    delete m.status?.machineState;
    expect(computeDesiredSet([m], null)).toMatchObject({ ips: [], existingCount: 1, runningCount: 0 });
  });

  it('offers both the fixed (dedup) and the unpatched (duplicates kept) hash', () => {
    const set = computeDesiredSet([cp('cp-0'), cp('cp-1')], null);
    expect(set.rawIps).toEqual([IP, IP]);
    expect(set.hashes).toEqual([dnsHash([IP]), '49d7a06b44f1b589723d2f0b9d4b055a9b77acb596e5f1b0e3f1c29d23892948']);
  });
});
