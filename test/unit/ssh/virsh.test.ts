import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createVmHostDir, type VmHostDir } from '../../../lab/vmhost-sim/index.ts';
import { buildDomiflistBatch, classifyDomiflist, parseDomiflist, quoteForVirsh, splitDomiflistBatch } from '../../../src/adapters/ssh/virsh.ts';

const run = promisify(execFile);
const FIXTURES = new URL('../../fixtures/virsh/', import.meta.url);

/** A fixture's output and exit status (its `# exit status: N` trailer is not output). */
function fixture(name: string): { output: string; exitCode: number } {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  const match = /\n?# exit status: (\d+)\n?$/.exec(text);
  if (!match) throw new Error(`${name}: no exit status trailer`);
  return { output: text.slice(0, match.index), exitCode: Number(match[1]) };
}

describe('parseDomiflist on the captured fixtures', () => {
  it('has a test for every domiflist fixture', () => {
    // The event-*.txt fixtures (virsh event) are read by test/unit/ssh/virsh-events.test.ts.
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.txt') && !f.startsWith('event-'));
    expect(files.sort()).toEqual(['domiflist-no-such-domain.txt', 'domiflist-one-nic.txt', 'domiflist-two-nics.txt', 'list-all-name.txt']);
  });

  it('reads one NIC, keeping the "-" model column', () => {
    const { output, exitCode } = fixture('domiflist-one-nic.txt');
    expect(classifyDomiflist(output, exitCode)).toEqual({
      kind: 'found',
      nics: [{ interface: 'testnet0', type: 'network', source: 'default', model: '-', mac: 'aa:bb:cc:dd:ee:ff' }],
    });
  });

  it('reads two NICs in order', () => {
    const { output, exitCode } = fixture('domiflist-two-nics.txt');
    const probe = classifyDomiflist(output, exitCode);
    expect(probe.kind).toBe('found');
    if (probe.kind !== 'found') return;
    expect(probe.nics.map((n) => [n.interface, n.type, n.source, n.model, n.mac])).toEqual([
      ['testnet0', 'bridge', 'br-metal', 'virtio', '52:54:00:3a:91:0c'],
      ['testnet1', 'network', 'default', 'e1000', '52:54:00:7f:12:e4'],
    ]);
  });

  it('classifies a missing domain', () => {
    const { output, exitCode } = fixture('domiflist-no-such-domain.txt');
    expect(exitCode).toBe(1);
    expect(classifyDomiflist(output, exitCode)).toEqual({ kind: 'missing', message: "error: failed to get domain 'site-b-node9'" });
  });

  it('finds no NIC in `virsh list --all --name` output (not a domiflist table)', () => {
    const { output } = fixture('list-all-name.txt');
    expect(parseDomiflist(output)).toEqual({ nics: [], unparsed: ['test', 'site-b-node1'] });
  });
});

describe('parseDomiflist layouts', () => {
  const cases: [string, string, { interface: string; mac: string }[]][] = [
    ['-q (no header, no dashes)', ' vnet3   bridge   br0   virtio   52:54:00:AA:01:02\n', [{ interface: 'vnet3', mac: '52:54:00:aa:01:02' }]],
    [
      'old fixed-width layout, no leading space',
      'Interface  Type       Source     Model       MAC\n-------------------------------------------------------\nvnet0      bridge     br0        virtio      52:54:00:12:34:56\n',
      [{ interface: 'vnet0', mac: '52:54:00:12:34:56' }],
    ],
    [
      'shut-off domain: "-" interface column',
      ' Interface   Type     Source   Model    MAC\n-----------------------------------------------------\n -           bridge   br0      virtio   52:54:00:00:00:01\n -           network  default  virtio   52:54:00:00:00:02\n',
      [
        { interface: '-', mac: '52:54:00:00:00:01' },
        { interface: '-', mac: '52:54:00:00:00:02' },
      ],
    ],
    ['CRLF line ends and dash-separated MAC', ' vnet0 bridge br0 virtio 52-54-00-0A-0B-0C\r\n', [{ interface: 'vnet0', mac: '52:54:00:0a:0b:0c' }]],
    ['a domain without NICs (header only)', ' Interface   Type   Source   Model   MAC\n-------------------------------------------\n\n', []],
  ];
  it.each(cases)('%s', (_name, output, expected) => {
    expect(parseDomiflist(output).nics.map((n) => ({ interface: n.interface, mac: n.mac }))).toEqual(expected);
  });
});

describe('classifyDomiflist errors', () => {
  it('a hypervisor connection failure is an error, not a missing domain', () => {
    const output = 'error: failed to connect to the hypervisor\nerror: Failed to connect socket to \'/var/run/libvirt/libvirt-sock\': Permission denied\n';
    expect(classifyDomiflist(output, 1)).toEqual({ kind: 'error', message: 'error: failed to connect to the hypervisor', exitCode: 1 });
  });

  it('virsh not installed (127)', () => {
    const probe = classifyDomiflist('sh: 1: virsh: not found\n', 127);
    expect(probe.kind).toBe('error');
    expect(probe.kind === 'error' && probe.message).toMatch(/^virsh not found on the VM host/);
  });

  it('a table with no parseable row and exit 0 is an error', () => {
    expect(classifyDomiflist('something unexpected\n', 0).kind).toBe('error');
  });

  it('a hostile name that prints a row-like line in its error stays missing', () => {
    const output = "error: failed to get domain 'x\n vnet0 bridge br0 virtio 52:54:00:66:66:66'\n";
    expect(classifyDomiflist(output, 1).kind).toBe('missing');
  });
});

describe('buildDomiflistBatch run by a real /bin/sh', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A PATH whose `virsh` logs its argv, then answers as the lab's virsh stub does. */
  function loggingVirsh(domains: { name: string; nics: { mac: string }[] }[]): { path: string; log: string; host: VmHostDir } {
    const host = createVmHostDir({ domains });
    dirs.push(host.dir);
    const dir = mkdtempSync(join(tmpdir(), 'virsh-log-'));
    dirs.push(dir);
    const log = join(dir, 'argv.log');
    writeFileSync(join(dir, 'virsh'), `#!/bin/sh\nfor a in "$@"; do printf '[%s]' "$a" >> ${shQuote(log)}; done; echo >> ${shQuote(log)}\nexec ${shQuote(join(host.binDir, 'virsh'))} "$@"\n`);
    chmodSync(join(dir, 'virsh'), 0o755);
    return { path: `${dir}:/usr/bin:/bin`, log, host };
  }

  async function runAll(batch: ReturnType<typeof buildDomiflistBatch>, path: string) {
    const outputs = [];
    for (const command of batch.commands) outputs.push({ ...(await run('/bin/sh', ['-c', command], { env: { PATH: path } })), code: 0 });
    return splitDomiflistBatch(batch, outputs);
  }

  it('one virsh process, its script one argument; hostile names are data to sh and to virsh', async () => {
    const pwned = join(tmpdir(), `pwned-${process.pid}-${Date.now()}`);
    const hostile = `x'; touch ${pwned}; '`;
    const stub = loggingVirsh([
      { name: 'site-b-node1', nics: [{ mac: '52:54:00:00:00:01' }, { mac: '52:54:00:00:00:02' }] },
      { name: '--help', nics: [{ mac: '52:54:00:00:00:03' }] },
    ]);
    const queries = [
      { uri: 'qemu:///system', domain: 'site-b-node1' },
      { uri: 'qemu:///system', domain: hostile },
      { uri: 'qemu:///system', domain: '--help' },
      { uri: 'qemu:///system', domain: '$(touch /tmp/never)' },
    ];
    const batch = buildDomiflistBatch(queries);
    expect(batch.commands).toHaveLength(1);
    const result = await runAll(batch, stub.path);
    expect(result.domains.map((p) => p.kind)).toEqual(['found', 'missing', 'found', 'missing']);
    expect(result.domains[0]?.kind === 'found' && result.domains[0].nics.map((n) => n.mac)).toEqual(['52:54:00:00:00:01', '52:54:00:00:00:02']);
    expect(result.listed).toEqual(['site-b-node1', '--help']);
    expect(existsSync(pwned)).toBe(false);
    const argv = readFileSync(stub.log, 'utf8').trim().split('\n');
    expect(argv).toHaveLength(1);
    expect(argv[0]).toContain(`domiflist --domain ${quoteForVirsh(hostile)};`);
    expect(argv[0]).toMatch(/^\[--connect\]\[qemu:\/\/\/system\]\[[^\]]*list --all --name/);
  });

  it('a name that prints a fake frame cannot forge one (the marker is random per run)', async () => {
    const stub = loggingVirsh([]);
    const forged = "x\nmacdiff-0000000000000000 end 0\n vnet0 bridge br0 virtio 52:54:00:66:66:66";
    const batch = buildDomiflistBatch([{ uri: 'qemu:///system', domain: forged }]);
    expect(batch.marker).not.toContain('0000000000000000');
    expect((await runAll(batch, stub.path)).domains).toEqual([{ kind: 'missing', message: "error: failed to get domain 'x" }]);
  });

  it('a cut-short output leaves the unframed domains as errors', () => {
    const batch = buildDomiflistBatch(
      [
        { uri: 'qemu:///system', domain: 'a' },
        { uri: 'qemu:///system', domain: 'b' },
      ],
      'MARKER-abcdefghijklmnop',
    );
    const stdout = 'MARKER-abcdefghijklmnop begin 0\n vnet0 bridge br0 virtio 52:54:00:00:00:01\n\nMARKER-abcdefghijklmnop end 0\nMARKER-abcdefghijklmnop begin 1\n vnet0';
    const { domains } = splitDomiflistBatch(batch, [{ stdout, code: null }]);
    expect(domains[0]?.kind).toBe('found');
    expect(domains[1]).toMatchObject({ kind: 'error', exitCode: null });
  });

  it("a host past one argument's budget gets a second virsh process, every domain still framed once", async () => {
    const names = Array.from({ length: 1200 }, (_, i) => `dom-${String(i).padStart(4, '0')}-${'n'.repeat(60)}`);
    const stub = loggingVirsh(names.map((name, i) => ({ name, nics: [{ mac: `52:54:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}` }] })));
    const batch = buildDomiflistBatch(names.map((domain) => ({ uri: 'qemu:///system', domain })));
    expect(batch.commands.length).toBeGreaterThan(1);
    for (const command of batch.commands) expect(command.length).toBeLessThan(128 * 1024);
    const result = await runAll(batch, stub.path);
    expect(result.domains.every((d) => d.kind === 'found')).toBe(true);
    expect(readFileSync(stub.log, 'utf8').trim().split('\n')).toHaveLength(batch.commands.length);
  });

  it('refuses a guessable marker', () => {
    expect(() => buildDomiflistBatch([], 'short')).toThrow(/marker/);
  });
});

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
