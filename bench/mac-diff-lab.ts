/**
 * The simulated world of the mac-diff benchmark, in its own process so that the worker's
 * memory and CPU figures are the worker's: the MAAS simulator and 20 SSH VM hosts, each behind
 * a latency proxy. Driven over the fork IPC channel by bench/mac-diff.ts.
 */
import { machine, virshPower, type SimMachine } from '../lab/maas-sim/index.ts';
import { startMacLab, type VmDomain } from '../lab/vmhost-sim/index.ts';

export interface BenchWorld {
  machines: number;
  hosts: number;
  rttMs: number;
  driftEvery: number;
}

export type LabRequest = { type: 'counts' } | { type: 'close' };
export type LabMessage =
  | { type: 'ready'; configText: string; env: Record<string, string>; machines: { systemId: string; vmHost: string; domain: string }[] }
  | { type: 'counts'; maasRequests: number; sshConnections: number; sshCommands: number };

function world(w: BenchWorld): { machines: SimMachine[]; sites: Parameters<typeof startMacLab>[0]['sites']; index: { systemId: string; vmHost: string; domain: string }[] } {
  const addresses = Array.from({ length: w.hosts }, (_v, i) => `127.0.1.${i + 1}`);
  const domains = new Map<string, VmDomain[]>(addresses.map((a) => [a, []]));
  const machines: SimMachine[] = [];
  const index: { systemId: string; vmHost: string; domain: string }[] = [];
  for (let n = 0; n < w.machines; n++) {
    const address = addresses[n % w.hosts] as string;
    const name = `bench-node${n}`;
    const systemId = `b${n.toString(36).padStart(5, '0')}`;
    const nicCount = n % 3 === 0 ? 2 : 1;
    const recorded = Array.from({ length: nicCount }, (_v, nic) => mac(0x10 + nic, n));
    const live = n % w.driftEvery === 0 ? recorded.map((_m, nic) => mac(0x90 + nic, n)) : recorded;
    machines.push(machine({ system_id: systemId, hostname: name, zone: 'bench', macs: recorded, power: virshPower(address, name) }));
    domains.get(address)?.push({ name, nics: live.map((m) => ({ mac: m })) });
    index.push({ systemId, vmHost: address, domain: name });
  }
  const vmHosts = addresses.map((address) => ({ address, state: { domains: domains.get(address) ?? [] } }));
  return { machines, sites: [{ name: 'bench', zone: 'bench', vmHosts }], index };
}

function mac(prefix: number, n: number): string {
  const h = (v: number) => (v & 0xff).toString(16).padStart(2, '0');
  return `52:54:00:${h(prefix)}:${h(n >> 8)}:${h(n)}`;
}

async function main(): Promise<void> {
  const w = JSON.parse(process.argv[2] ?? '{}') as BenchWorld;
  const built = world(w);
  const lab = await startMacLab({ machines: built.machines, sites: built.sites, maasLatencyMs: w.rttMs, sshRttMs: w.rttMs });
  const send = (m: LabMessage) => process.send?.(m);
  process.on('message', (m: LabRequest) => {
    if (m.type === 'counts') send({ type: 'counts', maasRequests: lab.maas.calls.length, sshConnections: lab.sshConnections(), sshCommands: lab.sshCommands() });
    if (m.type === 'close') void lab.close().then(() => process.exit(0));
  });
  send({ type: 'ready', configText: lab.configText, env: lab.env, machines: built.index });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
