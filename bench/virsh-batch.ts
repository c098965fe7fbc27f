/**
 * One VM host's read, per-domain virsh loop (the baseline) against one virsh process reading
 * its batch, at 10, 50 and 200 domains per host, side by side in one run.
 *
 *   node --import tsx bench/virsh-batch.ts
 *
 * Cost model: the lab's virsh stub sleeps CONNECT_MS per virsh process (a libvirt connection:
 * 20-50 ms on a real host) and COMMAND_MS per command (two RPCs on an open connection), on top of
 * the real cost of starting a process; SSH is a real ssh2 session through a TCP proxy adding a
 * 20 ms round trip. "Per host" is connect + command + close. A second table times the REAL
 * virsh on libvirt's test:///default driver (no daemon, no SSH, no model): N processes of one
 * domiflist each against one process reading N.
 *
 * Writes (or replaces) the `## virsh batch` section of bench/RESULTS.md.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { startMacLab, type MacLab } from '../lab/vmhost-sim/index.ts';
import type { VmHostProbePlan } from '../src/features/macs/vm-host-targets.ts';
import { vmHostTarget } from '../src/adapters/ssh/targets.ts';
import { probeVmHosts } from '../src/features/macs/virsh-probe.ts';
import { buildDomiflistBatch, splitDomiflistBatch } from '../src/adapters/ssh/virsh.ts';
import { machineContext, writeResultsSection } from './lib/results-md.ts';
import { probeWithLoop } from './lib/virsh-per-domain-loop.ts';

const run = promisify(execFile);
const SIZES = [10, 50, 200];
const CONNECT_MS = 30;
const COMMAND_COSTS = [0.25, 1];
const RTT_MS = 20;
const BATCH_RUNS = 5;
const HOST = '127.0.0.9';
const COMMAND = 'node --import tsx bench/virsh-batch.ts';

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function labFor(domains: number, commandMs: number): Promise<{ lab: MacLab; plan: VmHostProbePlan }> {
  const names = Array.from({ length: domains }, (_, i) => `vm-${String(i).padStart(3, '0')}`);
  const mac = (i: number) => `52:54:00:01:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
  const lab = await startMacLab({
    machines: [],
    sshRttMs: RTT_MS,
    sites: [{ name: 'bench', zone: 'bench', vmHosts: [{ address: HOST, state: { domains: names.map((name, i) => ({ name, nics: [{ mac: mac(i) }] })), costs: { connectMs: CONNECT_MS, commandMs } } }] }],
  });
  const address = { host: HOST, localUri: 'qemu:///system' };
  const plan: VmHostProbePlan = { vmHost: HOST, address, queries: names.map((domain) => ({ uri: address.localUri, domain })), systemIds: names };
  return { lab, plan };
}

async function timeBatch(lab: MacLab, plan: VmHostProbePlan): Promise<number> {
  const site = lab.config.sites['bench']!;
  const start = performance.now();
  const hosts = await probeVmHosts([plan], { connect: () => lab.adapters.ssh.connect(vmHostTarget(site, HOST)) });
  const ms = performance.now() - start;
  const host = hosts[plan.vmHost];
  if (!host?.ok || [...host.domains.values()].some((d) => d.kind !== 'found')) throw new Error(`batch read failed: ${JSON.stringify(host)}`);
  return ms;
}

async function timeLoop(lab: MacLab, plan: VmHostProbePlan): Promise<number> {
  const site = lab.config.sites['bench']!;
  const start = performance.now();
  const session = await lab.adapters.ssh.connect(vmHostTarget(site, HOST));
  try {
    const probes = await probeWithLoop(session, plan.queries);
    if (probes.some((p) => p.kind !== 'found')) throw new Error('loop read failed');
  } finally {
    session.close();
  }
  return performance.now() - start;
}

async function realVirsh(domains: number): Promise<{ loop: number; batch: number }> {
  const queries = Array.from({ length: domains }, () => ({ uri: 'test:///default', domain: 'test' }));
  let start = performance.now();
  for (const q of queries) await run('virsh', ['-q', '--connect', q.uri, 'domiflist', '--', q.domain]);
  const loop = performance.now() - start;
  const batch = buildDomiflistBatch(queries);
  start = performance.now();
  const { stdout } = await run('/bin/sh', ['-c', batch.commands[0]!]);
  const elapsed = performance.now() - start;
  if (splitDomiflistBatch(batch, [{ stdout, code: 0 }]).domains.some((d) => d.kind !== 'found')) throw new Error('real virsh batch failed');
  return { loop, batch: elapsed };
}

const s = (ms: number) => (ms / 1000).toFixed(3);

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const commandMs of COMMAND_COSTS) {
    const perSize: { n: number; loop: number; batch: number; sessions: number; commands: number }[] = [];
    for (const n of SIZES) {
      const { lab, plan } = await labFor(n, commandMs);
      try {
        await timeBatch(lab, plan);
        const batches: number[] = [];
        for (let i = 0; i < BATCH_RUNS; i++) batches.push(await timeBatch(lab, plan));
        const loops: number[] = [];
        for (let i = 0; i < (n >= 200 ? 1 : 3); i++) loops.push(await timeLoop(lab, plan));
        const host = lab.vmHosts.get(HOST)!;
        perSize.push({ n, loop: median(loops), batch: median(batches), sessions: host.ssh.authenticated, commands: host.ssh.commands.length });
        console.log(`commandMs=${commandMs} domains=${n}: loop ${s(median(loops))} s, batch ${s(median(batches))} s`);
      } finally {
        await lab.close();
      }
    }
    const base = perSize[0]!;
    for (const r of perSize) {
      rows.push(`| ${commandMs} ms | ${r.n} | ${s(r.loop)} | ${s(r.batch)} | ${(r.loop / r.batch).toFixed(1)}× | ${(r.loop / base.loop).toFixed(2)}× | ${(r.batch / base.batch).toFixed(2)}× |`);
    }
  }
  const real: string[] = [];
  if (existsSync('/usr/bin/virsh')) {
    for (const n of SIZES) {
      const r = await realVirsh(n);
      real.push(`| ${n} | ${s(r.loop)} | ${s(r.batch)} | ${(r.loop / r.batch).toFixed(1)}× |`);
    }
  }
  const body = [
    `\`${COMMAND}\` — ${machineContext()}.`,
    '',
    `Seconds per VM host (median of ${BATCH_RUNS} batch runs; the loop once at 200 domains, else median of 3). Cost model: ${CONNECT_MS} ms per virsh process (a libvirt connection), the per-command cost in the first column, a real ssh2 session through a ${RTT_MS} ms round-trip proxy, the lab's virsh stub as the process.`,
    '',
    '| per command | domains | per-domain loop (s) | one virsh batch (s) | speed-up | loop vs 10 domains | batch vs 10 domains |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Goal: a 200-domain host in under 1.5× the time of a 10-domain host (last column). Each loop process also pays for starting the stub (a Node program) on a loaded 2-CPU machine, so the loop column overstates a real host; the ratio between sizes is the figure that carries over. The batch runs `list --all --name` and every `domiflist` in the one process.',
    ...(real.length
      ? ['', 'The real virsh (libvirt-clients, `test:///default`, local, no SSH, no model): N `virsh domiflist` processes against one virsh reading N commands.', '', '| domains | N processes (s) | one process (s) | speed-up |', '|---|---|---|---|', ...real]
      : ['', 'The real virsh was not installed when this ran: no real-binary table.']),
  ].join('\n');
  writeResultsSection('## virsh batch', body);
  console.log(body);
}

await main();
