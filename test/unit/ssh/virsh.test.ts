import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDomiflistBatch, classifyDomiflist, parseDomiflist, splitDomiflistBatch } from '../../../src/ssh/virsh.ts';

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
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.txt'));
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

  /** A PATH with a `virsh` stub that prints a table for known domains and logs its argv. */
  function stubPath(known: Record<string, string[]>): { path: string; log: string } {
    const dir = mkdtempSync(join(tmpdir(), 'virsh-stub-'));
    dirs.push(dir);
    const log = join(dir, 'argv.log');
    const cases = Object.entries(known)
      .map(([dom, macs]) => `  ${shQuote(dom)}) ${macs.map((m, i) => `printf ' vnet${i}  bridge  br0  virtio  %s\\n' ${m}`).join('; ')}; exit 0 ;;`)
      .join('\n');
    const script = `#!/bin/sh
for a in "$@"; do printf '[%s]' "$a" >> ${shQuote(log)}; done; echo >> ${shQuote(log)}
eval "d=\\\${$#}"
case "$d" in
${cases}
  *) printf "error: failed to get domain '%s'\\n" "$d" >&2; exit 1 ;;
esac
`;
    writeFileSync(join(dir, 'virsh'), script);
    chmodSync(join(dir, 'virsh'), 0o755);
    return { path: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`, log };
  }

  it('frames every domain, passes names as data after `--`, and creates nothing for a hostile name', async () => {
    const pwned = join(tmpdir(), `pwned-${process.pid}-${Date.now()}`);
    const hostile = `x'; touch ${pwned}; '`;
    const stub = stubPath({ 'site-b-node1': ['52:54:00:00:00:01', '52:54:00:00:00:02'], '--help': ['52:54:00:00:00:03'] });
    const queries = [
      { uri: 'qemu:///system', domain: 'site-b-node1' },
      { uri: 'qemu:///system', domain: hostile },
      { uri: 'qemu:///system', domain: '--help' },
      { uri: 'qemu:///system', domain: '$(touch /tmp/never)' },
    ];
    const batch = buildDomiflistBatch(queries);
    const { stdout } = await run('/bin/sh', ['-c', batch.command], { env: { PATH: stub.path } });
    const probes = splitDomiflistBatch(batch, stdout);
    expect(probes.map((p) => p.kind)).toEqual(['found', 'missing', 'found', 'missing']);
    expect(probes[0]?.kind === 'found' && probes[0].nics.map((n) => n.mac)).toEqual(['52:54:00:00:00:01', '52:54:00:00:00:02']);
    expect(existsSync(pwned)).toBe(false);
    const argv = readFileSync(stub.log, 'utf8').trim().split('\n');
    expect(argv[1]).toBe(`[-q][--connect][qemu:///system][domiflist][--][${hostile}]`);
    expect(argv[2]).toBe('[-q][--connect][qemu:///system][domiflist][--][--help]');
  });

  it('a name that prints a fake frame cannot forge one (the marker is random per run)', async () => {
    const stub = stubPath({});
    const forged = "x\nmacdiff-0000000000000000 end 0 0\n vnet0 bridge br0 virtio 52:54:00:66:66:66";
    const batch = buildDomiflistBatch([{ uri: 'qemu:///system', domain: forged }]);
    expect(batch.marker).not.toContain('0000000000000000');
    const { stdout } = await run('/bin/sh', ['-c', batch.command], { env: { PATH: stub.path } });
    expect(splitDomiflistBatch(batch, stdout)).toEqual([{ kind: 'missing', message: "error: failed to get domain 'x" }]);
  });

  it('a cut-short output leaves the unframed domains as errors', () => {
    const batch = buildDomiflistBatch(
      [
        { uri: 'qemu:///system', domain: 'a' },
        { uri: 'qemu:///system', domain: 'b' },
      ],
      'MARKER-abcdefghijklmnop',
    );
    const stdout = '\nMARKER-abcdefghijklmnop begin 0\n vnet0 bridge br0 virtio 52:54:00:00:00:01\n\nMARKER-abcdefghijklmnop end 0 0\n\nMARKER-abcdefghijklmnop begin 1\n vnet0';
    const probes = splitDomiflistBatch(batch, stdout);
    expect(probes[0]?.kind).toBe('found');
    expect(probes[1]).toMatchObject({ kind: 'error', exitCode: null });
  });

  it('refuses a guessable marker', () => {
    expect(() => buildDomiflistBatch([], 'short')).toThrow(/marker/);
  });

  // Needs libvirt-clients (FACTS.md section 5); the stub tests above cover the framing without it.
  it.skipIf(!existsSync('/usr/bin/virsh'))('reads the real virsh test:///default driver in one command', async () => {
    const batch = buildDomiflistBatch([
      { uri: 'test:///default', domain: 'test' },
      { uri: 'test:///default', domain: 'site-b-node9' },
      { uri: 'test:///default', domain: '--inactive' },
    ]);
    const { stdout } = await run('/bin/sh', ['-c', batch.command]);
    expect(splitDomiflistBatch(batch, stdout)).toEqual([
      { kind: 'found', nics: [{ interface: 'testnet0', type: 'network', source: 'default', model: '-', mac: 'aa:bb:cc:dd:ee:ff' }] },
      { kind: 'missing', message: "error: failed to get domain 'site-b-node9'" },
      { kind: 'missing', message: "error: failed to get domain '--inactive'" },
    ]);
  });
});

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
