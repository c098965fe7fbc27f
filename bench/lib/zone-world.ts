/**
 * The mac-diff benchmarks' world: `sites` MAAS zones of `machines` virsh machines each, spread over
 * `hosts` VM hosts per site, a MAC drifted on every `driftEvery`th machine. Addresses are on
 * loopback: 127.<10 + site>.<host / 250>.<host % 250 + 1>.
 */
import { machine, virshPower, type SimMachine } from '../../lab/maas-sim/index.ts';
import type { MacLabSetup } from '../../lab/vmhost-sim/index.ts';
import type { VmDomain } from '../../lab/vmhost-sim/index.ts';

export interface ZoneWorld {
  sites: number;
  machines: number;
  hosts: number;
  driftEvery: number;
}

export interface BuiltWorld {
  machines: SimMachine[];
  sites: MacLabSetup['sites'];
  siteNames: string[];
}

export function siteName(site: number): string {
  return `bench-${String(site).padStart(2, '0')}`;
}

export function buildZoneWorld(w: ZoneWorld): BuiltWorld {
  const machines: SimMachine[] = [];
  const sites: MacLabSetup['sites'] = [];
  for (let s = 0; s < w.sites; s++) {
    const name = siteName(s);
    const addresses = Array.from({ length: w.hosts }, (_v, h) => `127.${10 + s}.${Math.floor(h / 250)}.${(h % 250) + 1}`);
    const domains = new Map<string, VmDomain[]>(addresses.map((a) => [a, []]));
    for (let n = 0; n < w.machines; n++) {
      const address = addresses[n % w.hosts] as string;
      const id = s * w.machines + n;
      const hostname = `${name}-node${n}`;
      const nicCount = n % 3 === 0 ? 2 : 1;
      const recorded = Array.from({ length: nicCount }, (_v, nic) => mac(0x10 + nic, id));
      const live = n % w.driftEvery === 0 ? recorded.map((_m, nic) => mac(0x90 + nic, id)) : recorded;
      machines.push(machine({ id: id + 1, system_id: `b${id.toString(36).padStart(6, '0')}`, hostname, zone: name, macs: recorded, power: virshPower(address, hostname) }));
      domains.get(address)?.push({ name: hostname, nics: live.map((m) => ({ mac: m })) });
    }
    sites.push({ name, zone: name, vmHosts: addresses.map((address) => ({ address, state: { domains: domains.get(address) ?? [] } })) });
  }
  return { machines, sites, siteNames: sites.map((s) => s.name) };
}

function mac(prefix: number, n: number): string {
  const h = (v: number) => (v & 0xff).toString(16).padStart(2, '0');
  return `52:${h(prefix)}:${h(n >> 24)}:${h(n >> 16)}:${h(n >> 8)}:${h(n)}`;
}
