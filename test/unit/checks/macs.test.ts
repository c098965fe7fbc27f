import { describe, expect, it } from 'vitest';
import { evaluateMacs, type HostProbe, type MacSnapshot } from '../../../src/features/macs/evaluate.ts';
import { pinnedMacsSnippet } from '../../../src/features/macs/summary.ts';
import { normaliseMac, type Mac } from '../../../src/core/mac.ts';
import type { MaasInterface, MaasMachine, PowerParameters } from '../../../src/adapters/maas/types.ts';
import { statusOf, type Finding } from '../../../src/core/report.ts';
import type { DomainProbe, LiveNic } from '../../../src/adapters/ssh/virsh.ts';

const HOST_A = '10.0.0.11';
const HOST_B = '10.0.0.12';

interface MachineSpec {
  id: string;
  macs: string[];
  /** Index into macs of the boot interface (default 0). */
  boot?: number;
  status?: string;
  powerType?: string;
  extra?: MaasInterface[];
}

let ifaceIds = 100;

function machine(spec: MachineSpec): MaasMachine {
  const ifaces: MaasInterface[] = spec.macs.map((mac, i) => ({ id: ifaceIds++, name: `ens${3 + i}`, type: 'physical', mac_address: mac }));
  const all = [...ifaces, ...(spec.extra ?? [])];
  return {
    system_id: spec.id,
    hostname: `host-${spec.id}`,
    fqdn: `host-${spec.id}.maas`,
    status: 4,
    status_name: spec.status ?? 'Ready',
    power_type: spec.powerType ?? 'virsh',
    power_state: 'off',
    zone: { name: 'site-b' },
    pool: { name: 'default' },
    tag_names: [],
    ip_addresses: [],
    boot_interface: ifaces[spec.boot ?? 0] ?? null,
    interface_set: all,
  };
}

function nics(...macs: string[]): LiveNic[] {
  return macs.map((mac, i) => ({ interface: `vnet${i}`, type: 'bridge', source: 'br0', model: 'virtio', mac: normaliseMac(mac) as Mac }));
}

function power(host: string, domain: string): PowerParameters {
  return { power_address: `qemu+ssh://ops@${host}/system`, power_id: domain };
}

/** A snapshot: machines on HOST_A unless placed, each domain named after the machine. */
function snapshot(entries: { m: MaasMachine; live?: DomainProbe; host?: string; domain?: string }[], down: string[] = []): MacSnapshot {
  const hosts: Record<string, HostProbe> = {};
  const powerById: Record<string, PowerParameters> = {};
  for (const { m, live, host = HOST_A, domain = `dom-${m.system_id}` } of entries) {
    powerById[m.system_id] = power(host, domain);
    if (down.includes(host)) {
      hosts[host] = { ok: false, reason: 'cannot open SSH to ' + host + ': connection refused' };
      continue;
    }
    const probe = hosts[host] ?? { ok: true, domains: new Map<string, DomainProbe>() };
    if (probe.ok && live) probe.domains.set(domain, live);
    hosts[host] = probe;
  }
  return { site: 'site-b', machines: entries.map((e) => e.m), power: powerById, hosts };
}

const found = (...macs: string[]): DomainProbe => ({ kind: 'found', nics: nics(...macs) });
const codes = (findings: Finding[]) => findings.map((f) => f.code).filter((c) => c !== 'MAC_SUMMARY');
const only = (findings: Finding[], code: string) => findings.filter((f) => f.code === code);

describe('evaluateMacs', () => {
  it('match: every recorded MAC is live → no finding but the summary, status ok', () => {
    const m = machine({ id: 'aaa001', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:00:00:01', '52:54:00:00:00:02') }]));
    expect(codes(result.findings)).toEqual([]);
    expect(statusOf(result.findings)).toBe('ok');
    expect(result.verdict).toBe('All 1 machines at site-b match their live MACs');
  });

  it('case and format normalisation: 52-54-00-AA-… recorded, 52:54:00:aa:… live', () => {
    const m = machine({ id: 'aaa002', macs: ['52-54-00-AA-BB-CC', '5254.00aa.bbcd'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:aa:bb:cc', '52:54:00:AA:BB:CD') }]));
    expect(codes(result.findings)).toEqual([]);
  });

  it('drift: one NIC regenerated → MAC_DRIFT with the contract evidence keys', () => {
    const m = machine({ id: 'aaa003', macs: ['52:54:00:00:00:01'], status: 'Failed commissioning' });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:9f:00:01') }]));
    const [drift] = only(result.findings, 'MAC_DRIFT');
    expect(drift).toMatchObject({
      severity: 'critical',
      subject: 'host-aaa003',
      fix: '/maas fix-macs site-b',
      evidence: {
        systemId: 'aaa003',
        hostname: 'host-aaa003',
        status: 'Failed commissioning',
        vmHost: HOST_A,
        domain: 'dom-aaa003',
        interface: 'ens3',
        recorded: '52:54:00:00:00:01',
        live: '52:54:00:9f:00:01',
        boot: true,
      },
    });
    expect(result.verdict).toBe('1 of 1 machines at site-b has drifted MACs: MAAS will see it as unknown at PXE');
    expect(statusOf(result.findings)).toBe('critical');
  });

  it('boot-interface pairing: the second NIC matches, the boot interface takes the first unmatched live NIC', () => {
    const m = machine({ id: 'aaa004', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:00:00:02', '52:54:00:77:00:01') }]));
    expect(codes(result.findings)).toEqual(['MAC_DRIFT']);
    expect(only(result.findings, 'MAC_DRIFT')[0]?.evidence).toMatchObject({ interface: 'ens3', recorded: '52:54:00:00:00:01', live: '52:54:00:77:00:01', boot: true });
  });

  it('every NIC drifted, boot interface first by id: paired in order', () => {
    const m = machine({ id: 'aaa005', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:77:00:01', '52:54:00:77:00:02') }]));
    expect(only(result.findings, 'MAC_DRIFT').map((f) => [f.evidence.interface, f.evidence.live])).toEqual([
      ['ens3', '52:54:00:77:00:01'],
      ['ens4', '52:54:00:77:00:02'],
    ]);
  });

  it('every NIC drifted but the boot interface is not the first: MAC_AMBIGUOUS, no guess', () => {
    const m = machine({ id: 'aaa006', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'], boot: 1 });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:77:00:01', '52:54:00:77:00:02') }]));
    expect(codes(result.findings)).toEqual(['MAC_AMBIGUOUS']);
    expect(only(result.findings, 'MAC_AMBIGUOUS')[0]).toMatchObject({ severity: 'critical', evidence: { systemId: 'aaa006' } });
  });

  it('ambiguous counts: one recorded unmatched against two live → MAC_AMBIGUOUS with recorded and live', () => {
    const m = machine({ id: 'aaa007', macs: ['52:54:00:00:00:01'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:77:00:01', '52:54:00:77:00:02') }]));
    const [amb] = only(result.findings, 'MAC_AMBIGUOUS');
    expect(amb?.severity).toBe('critical');
    expect(amb?.evidence).toMatchObject({
      systemId: 'aaa007',
      recorded: [{ interface: 'ens3', mac: '52:54:00:00:00:01' }],
      live: [
        { interface: 'vnet0', mac: '52:54:00:77:00:01' },
        { interface: 'vnet1', mac: '52:54:00:77:00:02' },
      ],
    });
    expect(codes(result.findings)).not.toContain('MAC_DRIFT');
    expect(result.verdict).toMatch(/^1 of 1 machines at site-b has drifted MACs/);
  });

  it('a recorded NIC gone from the domain (boot interface fine) is a warning', () => {
    const m = machine({ id: 'aaa008', macs: ['52:54:00:00:00:01', '52:54:00:00:00:02'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:00:00:01') }]));
    expect(only(result.findings, 'MAC_AMBIGUOUS').map((f) => f.severity)).toEqual(['warning']);
  });

  it('an extra live NIC that MAAS does not record is not drift', () => {
    const m = machine({ id: 'aaa009', macs: ['52:54:00:00:00:01'] });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:00:00:01', '52:54:00:00:00:99') }]));
    expect(codes(result.findings)).toEqual([]);
  });

  it('bonds, bridges and VLANs (borrowed MACs) are not compared', () => {
    const m = machine({
      id: 'aaa010',
      macs: ['52:54:00:00:00:01'],
      extra: [
        { id: 9001, name: 'br0', type: 'bridge', mac_address: '52:54:00:00:00:01' },
        { id: 9002, name: 'ens3.20', type: 'vlan', mac_address: '52:54:00:00:00:01' },
      ],
    });
    const result = evaluateMacs(snapshot([{ m, live: found('52:54:00:00:00:01') }]));
    expect(codes(result.findings)).toEqual([]);
  });

  it('in use: the live MAC is recorded on another machine → MAC_IN_USE next to MAC_DRIFT', () => {
    const a = machine({ id: 'aaa011', macs: ['52:54:00:00:00:01'] });
    const stale = machine({ id: 'aaa012', macs: ['52:54:00:77:00:01'] });
    const result = evaluateMacs(
      snapshot([
        { m: a, live: found('52:54:00:77:00:01') },
        { m: stale, live: { kind: 'missing', message: "error: failed to get domain 'dom-aaa012'" } },
      ]),
    );
    expect(codes(result.findings)).toEqual(['MAC_DRIFT', 'MAC_IN_USE', 'MAC_DOMAIN_MISSING']);
    expect(only(result.findings, 'MAC_IN_USE')[0]).toMatchObject({
      severity: 'critical',
      evidence: { systemId: 'aaa011', live: '52:54:00:77:00:01', otherSystemId: 'aaa012' },
    });
  });

  it('missing domain → MAC_DOMAIN_MISSING with systemId, vmHost, domain', () => {
    const m = machine({ id: 'aaa013', macs: ['52:54:00:00:00:01'] });
    const result = evaluateMacs(snapshot([{ m, live: { kind: 'missing', message: "error: failed to get domain 'dom-aaa013'" } }]));
    expect(only(result.findings, 'MAC_DOMAIN_MISSING')[0]).toMatchObject({
      severity: 'critical',
      evidence: { systemId: 'aaa013', vmHost: HOST_A, domain: 'dom-aaa013' },
    });
    expect(result.verdict).toBe('No machine at site-b could be compared with its live MACs; 1 power_id names no libvirt domain');
  });

  it('missing domain on a host whose virsh list has it in another case → the evidence names it', () => {
    const m = machine({ id: 'aaa013', macs: ['52:54:00:00:00:01'] });
    const snap = snapshot([{ m, live: { kind: 'missing', message: "error: failed to get domain 'dom-aaa013'" } }]);
    const host = snap.hosts[HOST_A];
    if (!host?.ok) throw new Error('host expected up');
    host.listed = ['DOM-aaa013', 'other'];
    expect(only(evaluateMacs(snap).findings, 'MAC_DOMAIN_MISSING')[0]?.evidence).toMatchObject({ domainsOnHost: 2, sameNameOtherCase: ['DOM-aaa013'] });
  });

  it('unreachable host → MAC_HOST_UNREACHABLE listing its machines; the other host is still reported', () => {
    const up = machine({ id: 'aaa014', macs: ['52:54:00:00:00:01'] });
    const down1 = machine({ id: 'aaa015', macs: ['52:54:00:00:00:02'] });
    const down2 = machine({ id: 'aaa016', macs: ['52:54:00:00:00:03'] });
    const result = evaluateMacs(
      snapshot(
        [
          { m: up, live: found('52:54:00:77:00:01') },
          { m: down1, host: HOST_B },
          { m: down2, host: HOST_B },
        ],
        [HOST_B],
      ),
    );
    expect(codes(result.findings)).toEqual(['MAC_DRIFT', 'MAC_HOST_UNREACHABLE']);
    expect(only(result.findings, 'MAC_HOST_UNREACHABLE')[0]).toMatchObject({
      severity: 'error',
      subject: HOST_B,
      evidence: { vmHost: HOST_B, machines: ['host-aaa015', 'host-aaa016'], systemIds: ['aaa015', 'aaa016'] },
    });
    expect(result.verdict).toBe(`1 of 3 machines at site-b has drifted MACs: MAAS will see it as unknown at PXE; 2 unchecked (VM host ${HOST_B} unreachable)`);
  });

  it('not virsh → MAC_NOT_VIRSH as info; the report stays ok', () => {
    const metal = machine({ id: 'aaa017', macs: ['00:25:90:00:00:01'], powerType: 'ipmi' });
    const vm = machine({ id: 'aaa018', macs: ['52:54:00:00:00:01'] });
    const snap = snapshot([{ m: vm, live: found('52:54:00:00:00:01') }]);
    snap.machines.push(metal);
    const result = evaluateMacs(snap);
    expect(only(result.findings, 'MAC_NOT_VIRSH')).toEqual([
      expect.objectContaining({ severity: 'info', evidence: { systemId: 'aaa017', hostname: 'host-aaa017', powerType: 'ipmi' } }),
    ]);
    expect(statusOf(result.findings)).toBe('ok');
    expect(result.verdict).toBe('1 of 2 machines at site-b match their live MACs; 1 not virsh-powered');
  });

  it('virsh machine without usable power parameters → PROBE_FAILED for it, others still checked', () => {
    const bad = machine({ id: 'aaa019', macs: ['52:54:00:00:00:01'] });
    const ok = machine({ id: 'aaa020', macs: ['52:54:00:00:00:02'] });
    const snap = snapshot([{ m: ok, live: found('52:54:00:00:00:02') }]);
    snap.machines.unshift(bad);
    snap.power[bad.system_id] = { power_address: 'qemu:///system', power_id: 'x' };
    const result = evaluateMacs(snap);
    expect(only(result.findings, 'PROBE_FAILED')[0]).toMatchObject({ subject: 'host-aaa019', evidence: { systemId: 'aaa019' } });
    expect(result.findings[0]?.evidence.reason).toMatch(/names no remote VM host/);
  });

  it('a virsh error other than a missing domain → PROBE_FAILED for that machine', () => {
    const m = machine({ id: 'aaa021', macs: ['52:54:00:00:00:01'] });
    const result = evaluateMacs(snapshot([{ m, live: { kind: 'error', message: 'error: failed to connect to the hypervisor', exitCode: 1 } }]));
    expect(codes(result.findings)).toEqual(['PROBE_FAILED']);
  });

  it('hostile domain names are reported verbatim and escaped in the HCL snippet', () => {
    const names = [`x'; touch /tmp/pwned; '`, '__proto__', 'a"${b}%{c}\\'];
    const entries = names.map((domain, i) => ({
      m: machine({ id: `bbb00${i}`, macs: [`52:54:00:00:01:0${i}`] }),
      domain,
      live: found(`52:54:00:00:02:0${i}`),
    }));
    const result = evaluateMacs(snapshot(entries));
    expect(only(result.findings, 'MAC_DRIFT').map((f) => f.evidence.domain)).toEqual(names);
    const summary = only(result.findings, 'MAC_SUMMARY')[0];
    const interfaceMacs = summary?.evidence.interfaceMacs as Record<string, string[]>;
    expect(Object.keys(interfaceMacs).sort()).toEqual([...names].sort());
    expect(Object.getPrototypeOf(interfaceMacs)).toBe(Object.prototype);
    expect(summary?.evidence.snippet).toContain('"a\\"$${b}%%{c}\\\\" = ["52:54:00:00:02:02"]');
    expect(summary?.evidence.snippet).toContain(`"x'; touch /tmp/pwned; '" = ["52:54:00:00:02:00"]`);
  });

  it('the seed: 9 of 12 drifted, one Failed commissioning, one Deployed → verdict, table, fix, pinned-MAC snippet', () => {
    const entries = Array.from({ length: 12 }, (_v, i) => {
      const n = String(i + 1).padStart(2, '0');
      const status = i === 0 ? 'Failed commissioning' : i === 1 ? 'Deployed' : 'Ready';
      const m = machine({ id: `seed${n}`, macs: [`52:54:00:10:00:${n}`], status });
      const live = i < 9 ? `52:54:00:20:00:${n}` : `52:54:00:10:00:${n}`;
      return { m, domain: `site-b-node${i + 1}`, host: i < 6 ? HOST_A : HOST_B, live: found(live) };
    });
    const result = evaluateMacs(snapshot(entries));
    expect(result.verdict).toBe('9 of 12 machines at site-b have drifted MACs: MAAS will see them as unknown at PXE');
    expect(only(result.findings, 'MAC_DRIFT')).toHaveLength(9);
    const summary = only(result.findings, 'MAC_SUMMARY')[0];
    expect(summary).toMatchObject({ severity: 'info', fix: expect.stringContaining('/maas fix-macs site-b'), evidence: { okMachines: 3 } });
    const table = summary?.evidence.tableText as string;
    expect(table.split('\n')[0]).toMatch(/^HOSTNAME\s+STATE\s+VM HOST\/DOMAIN\s+RECORDED → LIVE$/);
    expect(table).toMatch(/host-seed01\s+Failed commissioning\s+10\.0\.0\.11\/site-b-node1\s+ens3 52:54:00:10:00:01 → 52:54:00:20:00:01/);
    expect(table).toContain('Deployed');
    expect(summary?.evidence.snippet).toContain('interface_macs = {');
    expect(summary?.evidence.snippet).toContain('"site-b-node1" = ["52:54:00:20:00:01"]');
    expect(summary?.evidence.snippet).toContain('"site-b-node12" = ["52:54:00:10:00:12"]');
  });

  it('no machines: a verdict that says so', () => {
    const result = evaluateMacs({ site: 'site-b', machines: [], power: {}, hosts: {} });
    expect(result).toEqual({ verdict: 'MAAS lists no machines for site-b: nothing to compare', findings: [] });
  });
});

describe('pinnedMacsSnippet', () => {
  it('lists each domain with its live MACs in order', () => {
    expect(pinnedMacsSnippet({ 'site-b-node1': ['52:54:00:3a:91:0c', '52:54:00:7f:12:e4'] })).toBe(
      [
        '# libvirt domains: pin every NIC MAC so an in-place apply cannot regenerate it',
        'interface_macs = {',
        '  "site-b-node1" = ["52:54:00:3a:91:0c", "52:54:00:7f:12:e4"]',
        '}',
      ].join('\n'),
    );
  });
});
