import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVmHostDir, type VmHostDir } from '../../lab/vmhost-sim/index.ts';
import { buildDomiflistBatch, quoteForVirsh, splitDomiflistBatch, type DomainQuery } from '../../src/adapters/ssh/virsh.ts';
import { hostileNames } from '../helpers/hostile-names.ts';

/*
 * The batch against the REAL virsh (libvirt-clients; .ci/run installs it) on libvirt's built-in
 * test driver: `test:///<file>` loads a node whose domains carry the hostile-name corpus, in the
 * virsh process itself, with no daemon. A PATH shim counts virsh processes; the canary file is
 * created only if some parser took a name as code. The same batch then runs against the lab's
 * virsh stub, which must read it back the same way.
 */

const run = promisify(execFile);
const VIRSH = ['/usr/bin/virsh', '/usr/sbin/virsh', '/bin/virsh'].find((p) => existsSync(p));

let dir: string;
let nodeUri: string;
let names: string[];
let shimPath: string;
let stub: VmHostDir | undefined;
const CANARY = 'CANARY';

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/[\r\n\t]/g, (c) => `&#${c.charCodeAt(0)};`);
const mac = (i: number) => `52:54:00:00:33:${i.toString(16).padStart(2, '0')}`;

/** Every other corpus name is defined (one NIC each); the rest are asked for and must be missing. */
const defined = (i: number) => i % 2 === 0;

beforeAll(() => {
  if (!VIRSH) throw new Error('the real virsh is not installed: install libvirt-clients (.ci/run does)');
  dir = mkdtempSync(join(tmpdir(), 'virsh-real-'));
  // libvirt refuses '/' in a domain name, so the canary path is relative to the command's cwd.
  names = hostileNames(CANARY);
  const domains = names
    .map((name, i) =>
      defined(i)
        ? `<domain type='test'><name>${xml(name)}</name><memory>1024</memory><os><type>hvm</type></os>` +
          `<devices><interface type='bridge'><mac address='${mac(i)}'/><source bridge='br0'/><model type='virtio'/></interface></devices></domain>`
        : '',
    )
    .join('\n');
  writeFileSync(join(dir, 'node.xml'), `<node>\n${domains}\n</node>\n`);
  nodeUri = `test://${join(dir, 'node.xml')}`;
  const shim = join(dir, 'bin');
  mkdirSync(shim);
  writeFileSync(join(shim, 'virsh'), `#!/bin/sh\necho run >> ${join(dir, 'runs.log')}\nexec ${VIRSH} "$@"\n`);
  chmodSync(join(shim, 'virsh'), 0o755);
  shimPath = `${shim}:/usr/bin:/bin`;
});

afterAll(() => {
  stub?.remove();
  rmSync(dir, { recursive: true, force: true });
});

function runs(): number {
  const log = join(dir, 'runs.log');
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0;
}

async function runBatch(queries: DomainQuery[], path: string) {
  const batch = buildDomiflistBatch(queries);
  const outputs = [];
  for (const command of batch.commands) {
    try {
      const { stdout, stderr } = await run('/bin/sh', ['-c', command], { cwd: dir, env: { PATH: path }, maxBuffer: 16 * 1024 * 1024 });
      outputs.push({ stdout, stderr, code: 0 });
    } catch (err) {
      const e = err as { stdout: string; stderr: string; code: number };
      outputs.push({ stdout: e.stdout, stderr: e.stderr, code: e.code });
    }
  }
  return { batch, result: splitDomiflistBatch(batch, outputs) };
}

describe('the virsh batch against the real virsh (test driver)', () => {
  it('quoteForVirsh round-trips every corpus name through virsh\'s own parser (its echo command)', async () => {
    const before = runs();
    for (const name of [...names, '', ' ', '#x', 'a\\', '"', "'", ';', '\\\n']) {
      const { stdout } = await run('/bin/sh', ['-c', 'LC_ALL=C exec virsh -c "$1" "$2" 2>&1', 'q', 'test:///default', `echo -- ${quoteForVirsh(name)}`], { cwd: dir, env: { PATH: shimPath } });
      expect(stdout).toBe(`${name}\n`);
    }
    expect(runs() - before).toBe(names.length + 8);
    expect(existsSync(join(dir, CANARY))).toBe(false);
  });

  it('reads every hostile domain in ONE virsh process: defined ones found by exact name, the others missing, list --all in the same run', async () => {
    const before = runs();
    const queries = names.map((domain) => ({ uri: nodeUri, domain }));
    const { batch, result } = await runBatch(queries, shimPath);
    expect(batch.commands).toHaveLength(1);
    expect(runs() - before).toBe(1);
    expect(result.hostFailure).toBeNull();
    result.domains.forEach((probe, i) => {
      if (defined(i)) expect(probe, names[i]).toEqual({ kind: 'found', nics: [{ interface: 'testnet0', type: 'bridge', source: 'br0', model: 'virtio', mac: mac(i) }] });
      else expect(probe.kind, names[i]).toBe('missing');
    });
    const oneLine = names.filter((n, i) => defined(i) && !/[\r\n]/.test(n));
    expect(result.listed).toEqual(expect.arrayContaining(oneLine.map((n) => n.trim())));
    expect(existsSync(join(dir, CANARY))).toBe(false);
  });

  it('switches URI with `connect` inside the same process', async () => {
    const before = runs();
    const { result } = await runBatch(
      [
        { uri: nodeUri, domain: names[0]! },
        { uri: 'test:///default', domain: 'test' },
        { uri: nodeUri, domain: names[2]! },
      ],
      shimPath,
    );
    expect(runs() - before).toBe(1);
    expect(result.domains.map((d) => d.kind)).toEqual(['found', 'found', 'found']);
    expect(result.domains[1]).toMatchObject({ nics: [{ mac: 'aa:bb:cc:dd:ee:ff' }] });
  });

  it('a hypervisor that cannot be reached fails the host with virsh\'s own message', async () => {
    const { result } = await runBatch([{ uri: 'qemu:///nosuch', domain: 'a' }], shimPath);
    expect(result.domains).toEqual([]);
    expect(result.hostFailure).toBe('error: failed to connect to the hypervisor');
  });

  it('no virsh on the host: one reason, exit 127', async () => {
    const { result } = await runBatch([{ uri: nodeUri, domain: 'a' }], '/nonexistent');
    expect(result.hostFailure).toMatch(/^virsh not found on the VM host/);
  });

  it('the lab stub reads the same batch the same way', async () => {
    stub = createVmHostDir({
      uri: nodeUri,
      domains: names.flatMap((name, i) => (defined(i) ? [{ name, nics: [{ mac: mac(i), type: 'bridge', source: 'br0', model: 'virtio' }] }] : [])),
    });
    const queries = names.map((domain) => ({ uri: nodeUri, domain }));
    const real = (await runBatch(queries, shimPath)).result;
    const sim = (await runBatch(queries, `${stub.binDir}:/usr/bin:/bin`)).result;
    expect(sim.domains.map((d) => d.kind)).toEqual(real.domains.map((d) => d.kind));
    expect(sim.domains.map((d) => (d.kind === 'found' ? d.nics.map((n) => n.mac) : d.kind === 'missing' ? d.message : 'error'))).toEqual(
      real.domains.map((d) => (d.kind === 'found' ? d.nics.map((n) => n.mac) : d.kind === 'missing' ? d.message : 'error')),
    );
    expect(sim.listed).toEqual(real.listed);
    expect(existsSync(join(dir, CANARY))).toBe(false);
  });
});
