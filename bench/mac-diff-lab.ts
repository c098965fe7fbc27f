/**
 * The simulated world of the mac-diff benchmark, in its own process so that the worker's
 * memory and CPU figures are the worker's: the MAAS simulator and the sites' SSH VM hosts, each
 * behind a latency proxy. Driven over the fork IPC channel by bench/mac-diff.ts.
 */
import { startMacLab } from '../lab/vmhost-sim/index.ts';
import { buildZoneWorld, type ZoneWorld } from './lib/zone-world.ts';

export interface BenchWorld extends ZoneWorld {
  rttMs: number;
}

export type LabRequest = { type: 'counts' } | { type: 'close' };
export type LabMessage =
  | { type: 'ready'; configText: string; env: Record<string, string>; siteNames: string[] }
  | { type: 'counts'; maasRequests: number; sshConnections: number; sshCommands: number };

async function main(): Promise<void> {
  const w = JSON.parse(process.argv[2] ?? '{}') as BenchWorld;
  const built = buildZoneWorld(w);
  const lab = await startMacLab({ machines: built.machines, sites: built.sites, maasLatencyMs: w.rttMs, sshRttMs: w.rttMs });
  const send = (m: LabMessage) => process.send?.(m);
  process.on('message', (m: LabRequest) => {
    if (m.type === 'counts') send({ type: 'counts', maasRequests: lab.maas.calls.length, sshConnections: lab.sshConnections(), sshCommands: lab.sshCommands() });
    if (m.type === 'close') void lab.close().then(() => process.exit(0));
  });
  send({ type: 'ready', configText: lab.configText, env: lab.env, siteNames: built.siteNames });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
