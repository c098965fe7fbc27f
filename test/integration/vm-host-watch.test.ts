import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { machine, virshPower } from '../../lab/maas-sim/index.ts';
import { generateKeyPair } from '../../lab/ssh-sim/index.ts';
import { startMacLab, type MacLab, type SimVmHost, type VmDomain } from '../../lab/vmhost-sim/index.ts';
import { parseConfigText, type Config } from '../../src/core/config.ts';
import { createLogger, silentLogger, type Logger } from '../../src/core/log.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { startVmHostWatchScans, vmHostWatchDetail } from '../../src/edge/alerts/vm-host-watch-scans.ts';
import type { VmHostWatches, VmHostWatchTuning } from '../../src/edge/alerts/vm-host-watch.ts';
import { JobQueues } from '../../src/engine/queue/job-queues.ts';
import { createRedis } from '../../src/engine/queue/redis-connection.ts';
import { SCAN_JOB } from '../../src/features/registry.ts';
import { deletePrefix, freshPrefix, TEST_REDIS_URL, waitUntil } from '../helpers/redis.ts';

// Real parts: the watch lists the site's VM hosts from the MAAS simulator (as mac-diff does),
// opens pinned SSH sessions through the ssh2 connector to the lab's ssh2 VM host, whose virsh
// stub streams lifecycle events as libvirt-clients 9 prints them, and queues the mac-diff scan
// through JobQueues on Redis. The scan itself is counted in the queue, not run.

const HOST = '127.0.32.1';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const domains: VmDomain[] = [1, 2].map((n) => ({ name: `site-b-node${n}`, running: false, nics: [{ mac: `52:54:00:b0:00:0${n}` }] }));

async function lab(): Promise<MacLab> {
  const l = await startMacLab({
    machines: [1, 2].map((n) => machine({ system_id: `sb000${n}`, hostname: `site-b-node${n}`, zone: 'site-b', macs: [`52:54:00:b0:00:0${n}`], power: virshPower(HOST, `site-b-node${n}`) })),
    sites: [{ name: 'site-b', zone: 'site-b', vmHosts: [{ address: HOST, state: { domains } }] }],
  });
  cleanups.push(() => l.close());
  return l;
}

/** The lab's config with the site's VM host watch on; `hostKey` replaces the pinned key. */
function watchedConfig(l: MacLab, hostKey?: string): Config {
  const raw = JSON.parse(l.configText);
  raw.sites['site-b'].watch = { vmHosts: true };
  if (hostKey) raw.sites['site-b'].vmHosts[HOST].hostKey = hostKey;
  return parseConfigText(JSON.stringify(raw), { path: 'lab.yaml', env: l.env }).config;
}

interface Worker {
  watches: VmHostWatches;
  queues: JobQueues;
  registry: Registry;
}

async function worker(l: MacLab, config: Config, prefix: string, log: Logger = silentLogger(), tuning: VmHostWatchTuning = {}): Promise<Worker> {
  const redis = createRedis(TEST_REDIS_URL, 'producer');
  const queues = new JobQueues(redis, createRedactor([]), prefix);
  const registry = new Registry();
  const watches = startVmHostWatchScans({
    config,
    adapters: l.adapters,
    enqueue: (name, data, options) => queues.enqueue(name, data, options),
    registry,
    log,
    tuning: { redefineGraceMs: 5_000, backoff: { baseMs: 50, maxMs: 200 }, ...tuning },
  });
  if (!watches) throw new Error('the watch did not start');
  cleanups.push(async () => {
    await watches.close();
    await deletePrefix(redis, prefix);
    await queues.close();
    redis.disconnect();
  });
  return { watches, queues, registry };
}

async function scans(w: Worker): Promise<{ check: unknown; target: unknown; trigger: unknown }[]> {
  const jobs = await w.queues.queue(SCAN_JOB).getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
  return jobs.map((j) => ({ check: j.data.check, target: j.data.target, trigger: j.data.trigger }));
}

const undefine = (domain: string) => ({ domain, event: 'Undefined', detail: 'Removed' });
const define = (domain: string) => ({ domain, event: 'Defined', detail: 'Added' });
const eventsRead = (w: Worker) => w.watches.health().reduce((n, h) => n + h.events, 0);

/** Several debounce periods with nothing more expected: what was going to be queued is queued. */
const settle = () => new Promise((r) => setTimeout(r, 1_500));

describe('the VM host watch (virsh event over pinned SSH)', () => {
  it('an undefine and the redefine a moment later queue exactly one mac-diff of the site, over one SSH session', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const w = await worker(l, watchedConfig(l), freshPrefix('vmwatch'));
    await waitUntil(() => vmHost.files.eventListeners() === 1);
    expect(w.watches.health()).toMatchObject([{ site: 'site-b', vmHost: HOST, state: 'watching', healthy: true, sessions: 1 }]);

    vmHost.emit(undefine('site-b-node1'));
    await waitUntil(() => eventsRead(w) === 1);
    // Undefined alone: the watch waits for the redefinition rather than diff a half-applied host.
    vmHost.emit(define('site-b-node1'));
    await waitUntil(async () => (await scans(w)).length > 0);
    await settle();
    expect(await scans(w)).toEqual([{ check: 'mac-diff', target: 'site-b', trigger: [`VM host ${HOST}: domain "site-b-node1" undefined and defined again (its NICs may have new MACs)`] }]);
    // One session: the watch held open, and one read of what the changed domain holds now.
    expect(vmHost.ssh.authenticated).toBe(1);
    expect(vmHost.ssh.commands).toHaveLength(2);
    expect(vmHost.ssh.commands[0]).toContain('event --loop --event lifecycle');
    expect(vmHost.ssh.commands[1]).toMatch(/domiflist --domain .*site-b-node1/);

    // A domain started or stopped changes no MAC: nothing is queued for it.
    vmHost.emit({ domain: 'site-b-node2', event: 'Started', detail: 'Booted' });
    await waitUntil(() => eventsRead(w) === 3);
    await settle();
    expect(await scans(w)).toHaveLength(1);

    const metrics = await w.registry.metrics();
    expect(metrics).toContain('maas_chatops_vmhost_watches{state="watching"} 1');
    expect(metrics).toContain('maas_chatops_vmhost_watch_events_total{event="Defined"} 1');
    expect(vmHostWatchDetail(w.watches)).toMatchObject({ vmHostWatches: [{ site: 'site-b', vmHost: HOST, state: 'watching', sessions: 1, events: 3 }] });
  });

  it('a replace and its revert a moment later are two mac-diffs: the MACs after each tell them apart', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const w = await worker(l, watchedConfig(l), freshPrefix('vmwatch'));
    await waitUntil(() => vmHost.files.eventListeners() === 1);
    vmHost.redefine('site-b-node1', [{ mac: '52:54:00:e7:00:01' }]);
    await waitUntil(async () => (await scans(w)).length === 1);
    // The same events again, back to the recorded MAC: the alert the first one opened must be re-checked.
    vmHost.redefine('site-b-node1', [{ mac: '52:54:00:b0:00:01' }]);
    await waitUntil(async () => (await scans(w)).length === 2);
    await settle();
    expect(await scans(w)).toHaveLength(2);
  });

  it('a dropped session reconnects (one more session), and events after it still queue the mac-diff', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const w = await worker(l, watchedConfig(l), freshPrefix('vmwatch'));
    await waitUntil(() => vmHost.files.eventListeners() === 1);

    vmHost.ssh.dropConnections();
    await waitUntil(() => vmHost.files.eventListeners() === 2);
    expect(vmHost.ssh.authenticated).toBe(2);
    expect(w.watches.health()).toMatchObject([{ state: 'watching', sessions: 2, restarts: { dropped: 1, exited: 0, error: 0 } }]);
    expect(await w.registry.metrics()).toContain('maas_chatops_vmhost_watch_restarts_total{reason="dropped"} 1');

    vmHost.emit(undefine('site-b-node2'), define('site-b-node2'));
    await waitUntil(async () => (await scans(w)).length > 0);
    await settle();
    expect(await scans(w)).toHaveLength(1);
    expect(vmHost.ssh.authenticated).toBe(2);
  });

  it('libvirtd restarting ends virsh event; the watch opens it again and says what ended it', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const w = await worker(l, watchedConfig(l), freshPrefix('vmwatch'));
    await waitUntil(() => vmHost.files.eventListeners() === 1);
    vmHost.restartLibvirt();
    await waitUntil(() => vmHost.files.eventListeners() === 2);
    expect(w.watches.health()).toMatchObject([
      { state: 'watching', sessions: 2, restarts: { exited: 1, dropped: 0 }, lastError: 'virsh event ended (exit status 1): error: Disconnected from qemu:///system due to end of file' },
    ]);
  });

  it('a virsh that cannot reach libvirt is retried with backoff, doubling to the cap, never in a tight loop', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    vmHost.setState({ domains, uri: 'qemu:///elsewhere' });
    const delays: number[] = [];
    const w = await worker(l, watchedConfig(l), freshPrefix('vmwatch'), silentLogger(), {
      random: () => 0.5,
      sleep: async (ms) => {
        delays.push(ms);
        await new Promise((r) => setTimeout(r, 5));
      },
    });
    await waitUntil(() => delays.length >= 4);
    // Base 50 ms, cap 200 ms, jitter in the upper half (random 0.5: three quarters of the ceiling).
    expect(delays.slice(0, 4)).toEqual([38, 75, 150, 150]);
    const health = w.watches.health()[0];
    expect(health?.state).not.toBe('stopped');
    expect(health?.lastError).toMatch(/^virsh event ended \(exit status 1\): error: failed to connect to the hypervisor/);
    // One SSH session per attempt, each after its wait.
    expect(vmHost.ssh.authenticated).toBeLessThanOrEqual(delays.length + 1);
  });

  it('a refused host key stops that host\'s watch with a clear log line: one attempt, no retry loop', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const lines: { level: number; msg: string; reason?: string }[] = [];
    const log = createLogger({ destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }) });
    const wrongPin = generateKeyPair('not-the-host').fingerprint;
    const w = await worker(l, watchedConfig(l, wrongPin), freshPrefix('vmwatch'), log);
    await waitUntil(() => w.watches.health()[0]?.state === 'stopped');
    // Well past the backoff (50–200 ms): a retry loop would have come back by now.
    await settle();
    expect(vmHost.ssh.sessions).toBe(1);
    expect(vmHost.ssh.authenticated).toBe(0);
    const health = w.watches.health()[0];
    expect(health?.stoppedReason).toMatch(new RegExp(`^SSH refused: the host key of ${HOST.replace(/\./g, '\\.')}:\\d+ matches none of the 1 pinned: it offered ssh-ed25519 ${vmHost.ssh.hostKeyFingerprint.replace(/[+/]/g, '\\$&')}`));
    const stopped = lines.filter((line) => line.level === 50);
    expect(stopped).toHaveLength(1);
    expect(stopped[0]?.msg).toContain(`VM host watch of ${HOST} stopped, not retried: SSH refused`);
    expect(stopped[0]?.msg).toContain(`hostKey: "${vmHost.ssh.hostKeyFingerprint}"`);
    expect(await w.registry.metrics()).toContain('maas_chatops_vmhost_watches{state="stopped"} 1');
  });

  it('SSH settings without a key stop that host\'s watch before any connection, naming the key to set', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const raw = JSON.parse(l.configText);
    raw.sites['site-b'].watch = { vmHosts: true };
    delete raw.sites['site-b'].vmHosts.default.privateKey;
    const { config } = parseConfigText(JSON.stringify(raw), { path: 'lab.yaml', env: l.env });
    const w = await worker(l, config, freshPrefix('vmwatch'));
    await waitUntil(() => w.watches.health()[0]?.state === 'stopped');
    expect(w.watches.health()[0]?.stoppedReason).toMatch(/^sites\.site-b\.vmHosts\.127\.0\.32\.1\.privateKey: no SSH private key for 127\.0\.32\.1\. Set privateKey: file:\/path\/to\/key under/);
    expect(vmHost.ssh.sessions).toBe(0);
  });

  it('two workers watching the same host queue the mac-diff once', async () => {
    const l = await lab();
    const vmHost = l.vmHosts.get(HOST) as SimVmHost;
    const prefix = freshPrefix('vmwatch');
    const config = watchedConfig(l);
    const a = await worker(l, config, prefix);
    const b = await worker(l, config, prefix);
    await waitUntil(() => vmHost.files.eventListeners() === 2);

    vmHost.emit(undefine('site-b-node1'), define('site-b-node1'));
    await waitUntil(() => eventsRead(a) === 2 && eventsRead(b) === 2);
    await waitUntil(async () => (await scans(a)).length > 0);
    await settle();
    expect(await scans(a)).toHaveLength(1);
    expect(vmHost.ssh.authenticated).toBe(2);

    // Another change of the same host is a new mac-diff, still one for both workers.
    vmHost.emit(undefine('site-b-node2'), define('site-b-node2'));
    await waitUntil(async () => (await scans(b)).length > 1);
    await settle();
    const domainsDiffed = (await scans(b)).map((s) => String(s.trigger).match(/site-b-node\d/)?.[0]).sort();
    expect(domainsDiffed).toEqual(['site-b-node1', 'site-b-node2']);
  });
});
