import { machine, virshPower, type SimMachine } from '../maas-sim/index.ts';
import type { VmDomain, VmHostState } from './virsh-stub.ts';

/**
 * The MAC part of the lab, modelled on seed 001: an in-place OpenTofu apply regenerated the
 * unpinned NIC MACs of site-b's VMs, so 9 of its 12 machines PXE as unknown nodes. site-a is
 * healthy. Addresses are loopback: the lab starts one VM host (startVmHost) on each.
 */
export interface MacLabVmHost {
  /** The loopback address the machines' power_address names (and the lab listens on). */
  address: string;
  state: VmHostState;
}

export interface MacLabSite {
  name: string;
  zone: string;
  vmHosts: MacLabVmHost[];
  /** What `mac-diff <name>` should say. */
  expected: { status: 'ok' | 'critical'; verdict: string; drifted: string[] };
}

export interface MacLabScenario {
  sites: MacLabSite[];
  /** MAAS machine objects (maas-sim builders) to add to the MAAS simulator's scenario. */
  maasMachines: SimMachine[];
}

export interface MacLabOptions {
  /** VM host addresses; defaults keep the sites apart on 127.0.0.0/8. */
  siteA?: [string];
  siteB?: [string, string];
  /** The SSH user written into power_address (the config may override it). */
  powerUser?: string;
}

const recordedMac = (site: number, n: number, nic = 0) => `52:54:00:${hex(site)}:${hex(nic)}:${hex(n)}`;
const regeneratedMac = (n: number, nic = 0) => `52:54:00:${hex(0x80 + n)}:${hex(0x40 + nic)}:${hex(0x17 * n)}`;

function hex(n: number): string {
  return (n & 0xff).toString(16).padStart(2, '0');
}

export function macLabScenario(options: MacLabOptions = {}): MacLabScenario {
  const user = options.powerUser ?? 'ubuntu';
  const siteA = buildSiteA(options.siteA ?? ['127.0.10.1'], user);
  const siteB = buildSiteB(options.siteB ?? ['127.0.20.1', '127.0.20.2'], user);
  return { sites: [siteA.site, siteB.site], maasMachines: [...siteA.machines, ...siteB.machines] };
}

/** 12 VMs over two hosts; nodes 1-9 drifted (node 1 Failed commissioning, node 2 Deployed); node 3 has two NICs. */
function buildSiteB(addresses: [string, string], user: string): { site: MacLabSite; machines: SimMachine[] } {
  const machines: SimMachine[] = [];
  const domains: VmDomain[][] = [[], []];
  const drifted: string[] = [];
  for (let n = 1; n <= 12; n++) {
    const hostname = `site-b-node${n}`;
    const hostIndex = n <= 6 ? 0 : 1;
    const nicCount = n === 3 ? 2 : 1;
    const recorded = Array.from({ length: nicCount }, (_v, nic) => recordedMac(0xb0, n, nic));
    const isDrifted = n <= 9;
    const live = isDrifted ? recorded.map((_m, nic) => regeneratedMac(n, nic)) : recorded;
    if (isDrifted) drifted.push(hostname);
    machines.push(
      machine({
        system_id: `sb${String(n).padStart(4, '0')}`,
        hostname,
        zone: 'site-b',
        status: n === 1 ? 'Failed commissioning' : n === 2 ? 'Deployed' : 'Ready',
        ...(n === 1 ? { error_description: 'Timeout while commissioning (30 min)' } : {}),
        macs: recorded,
        // The VM PXE-boots from its live first NIC: MAAS commissions it only once it records that MAC.
        ...(isDrifted ? { live_boot_mac: live[0] } : {}),
        power: virshPower(addresses[hostIndex], hostname, user),
      }),
    );
    domains[hostIndex]?.push({ name: hostname, running: n === 2, nics: live.map((mac, nic) => ({ mac, ...(nic ? { type: 'network', source: 'default' } : {}) })) });
  }
  return {
    machines,
    site: {
      name: 'site-b',
      zone: 'site-b',
      vmHosts: addresses.map((address, i) => ({ address, state: { domains: domains[i] ?? [] } })),
      expected: { status: 'critical', verdict: '9 of 12 machines at site-b have drifted MACs: MAAS will see them as unknown at PXE', drifted },
    },
  };
}

/** Four VMs whose records match, plus one bare-metal machine that is not virsh-powered. */
function buildSiteA(addresses: [string], user: string): { site: MacLabSite; machines: SimMachine[] } {
  const machines: SimMachine[] = [];
  const domains: VmDomain[] = [];
  for (let n = 1; n <= 4; n++) {
    const hostname = `site-a-node${n}`;
    const mac = recordedMac(0xa0, n);
    machines.push(machine({ system_id: `sa${String(n).padStart(4, '0')}`, hostname, zone: 'site-a', status: 'Deployed', macs: [mac], power: virshPower(addresses[0], hostname, user) }));
    domains.push({ name: hostname, running: true, nics: [{ mac }] });
  }
  machines.push(
    machine({
      system_id: 'sa0099',
      hostname: 'site-a-metal1',
      zone: 'site-a',
      status: 'Deployed',
      macs: ['0c:c4:7a:00:00:01'],
      power: { power_type: 'ipmi', power_parameters: { power_address: '10.0.0.99', power_user: 'maas', power_pass: 'lab-ipmi-pass' } },
    }),
  );
  return {
    machines,
    site: {
      name: 'site-a',
      zone: 'site-a',
      vmHosts: [{ address: addresses[0], state: { domains } }],
      expected: { status: 'ok', verdict: '4 of 5 machines at site-a match their live MACs; 1 not virsh-powered', drifted: [] },
    },
  };
}
