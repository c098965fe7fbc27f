import { afterEach, describe, expect, it } from 'vitest';
import { machine, virshPower, type SimMachine } from '../../lab/maas-sim/index.ts';
import { startMacLab, type MacLab, type VmDomain } from '../../lab/vmhost-sim/index.ts';
import { createMaasClient, type MaasRequestInfo } from '../../src/adapters/maas/client.ts';
import type { Config } from '../../src/core/config.ts';
import { silentLogger } from '../../src/core/log.ts';
import { macDiffCheck } from '../../src/features/macs/index.ts';
import { runCheck } from '../../src/features/run-check.ts';

// Real parts: the MAAS simulator rendering machines at a real 3.4.10 region's size (about 14 KB
// each), ssh2 VM hosts with the virsh stub, the MAAS client with its default settings.

const OLD_CAP = 64 * 1024 * 1024;
const MACHINES = 5_200;
/** 200 domains a host, as a real VM host might hold. */
const HOSTS = Array.from({ length: 26 }, (_v, i) => `127.0.41.${i + 1}`);
const DRIFT_EVERY = 100;

let lab: MacLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});

/** One zone of MACHINES virsh machines over the hosts; every DRIFT_EVERY-th machine's live MAC differs from MAAS's. */
function bigZone(): { machines: SimMachine[]; domains: Map<string, VmDomain[]> } {
  const machines: SimMachine[] = [];
  const domains = new Map<string, VmDomain[]>(HOSTS.map((h) => [h, []]));
  const hex = (v: number) => (v & 0xff).toString(16).padStart(2, '0');
  for (let n = 0; n < MACHINES; n++) {
    const host = HOSTS[n % HOSTS.length] as string;
    const hostname = `big-${n}`;
    const recorded = `52:54:00:40:${hex(n >> 8)}:${hex(n)}`;
    machines.push(machine({ system_id: `big${n.toString(36).padStart(4, '0')}`, hostname, zone: 'big', macs: [recorded], power: virshPower(host, hostname) }));
    domains.get(host)?.push({ name: hostname, nics: [{ mac: n % DRIFT_EVERY === 0 ? `52:54:00:41:${hex(n >> 8)}:${hex(n)}` : recorded }] });
  }
  return { machines, domains };
}

describe('a zone larger than the old 64 MiB body cap', () => {
  it('is diagnosed with default settings: every machine checked, the drifted ones found, one SSH session per VM host', async () => {
    const zone = bigZone();
    lab = await startMacLab({ machines: zone.machines, sites: [{ name: 'big', zone: 'big', vmHosts: HOSTS.map((address) => ({ address, state: { domains: zone.domains.get(address) ?? [] } })) }] });
    const answers: MaasRequestInfo[] = [];
    // The client as a worker builds it with nothing set: MAAS_MAX_BODY_MIB at its default.
    const maas = createMaasClient(lab.config.maas['region-a'] as Config['maas'][string], { onRequest: (info) => answers.push(info) });
    try {
      const [report] = await runCheck({ config: lab.config, adapters: { ...lab.adapters, maas: () => maas }, log: silentLogger() }, macDiffCheck, 'big');
      const listed = answers.find((a) => a.path === 'machines/?zone=big');
      expect(listed?.bytes).toBeGreaterThan(OLD_CAP);
      expect(report?.findings.filter((f) => f.code === 'PROBE_FAILED')).toEqual([]);
      expect(report?.findings.filter((f) => f.code === 'MAC_DRIFT')).toHaveLength(MACHINES / DRIFT_EVERY);
      expect(report?.verdict).toMatch(new RegExp(`^${MACHINES / DRIFT_EVERY} of ${MACHINES} machines at big have drifted MACs`));
      expect(lab.sshConnections()).toBe(HOSTS.length);
    } finally {
      await maas.close();
    }
  }, 300_000);
});
