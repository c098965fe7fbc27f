import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createVmHostDir, type VmHostDir } from '../../../lab/vmhost-sim/virsh-stub.ts';
import { buildDomiflistBatch, classifyDomiflist, splitDomiflistBatch } from '../../../src/adapters/ssh/virsh.ts';

const run = promisify(execFile);

/** Runs the stub like a shell would; resolves even on a non-zero exit. */
async function virsh(host: VmHostDir, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(join(host.binDir, 'virsh'), args);
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe('the vmhost-sim virsh stub', () => {
  let host: VmHostDir | undefined;
  afterEach(() => host?.remove());

  it('prints domiflist as the captured fixtures do, and the parser reads it back', async () => {
    host = createVmHostDir({
      domains: [{ name: 'site-b-node1', nics: [{ mac: '52:54:00:3a:91:0c' }, { mac: '52:54:00:7f:12:e4', type: 'network', source: 'default', model: 'e1000' }] }],
    });
    const full = await virsh(host, '--connect', 'qemu:///system', 'domiflist', 'site-b-node1');
    expect(full.code).toBe(0);
    const lines = full.stdout.split('\n');
    expect(lines[0]).toMatch(/^ Interface\s+Type\s+Source\s+Model\s+MAC$/);
    expect(lines[1]).toMatch(/^-+$/);
    expect(classifyDomiflist(full.stdout, full.code)).toMatchObject({
      kind: 'found',
      nics: [
        { interface: 'vnet0', type: 'bridge', source: 'br-metal', model: 'virtio', mac: '52:54:00:3a:91:0c' },
        { interface: 'vnet1', type: 'network', source: 'default', model: 'e1000', mac: '52:54:00:7f:12:e4' },
      ],
    });
    const quiet = await virsh(host, '-q', '--connect', 'qemu:///system', 'domiflist', '--', 'site-b-node1');
    expect(quiet.stdout.split('\n')[0]).toMatch(/^ vnet0\s+bridge/);
  });

  it('a missing domain: the fixture message on stderr, exit 1', async () => {
    host = createVmHostDir({ domains: [] });
    const out = await virsh(host, '--connect', 'qemu:///system', 'domiflist', 'site-b-node9');
    const fixture = readFileSync(new URL('../../fixtures/virsh/domiflist-no-such-domain.txt', import.meta.url), 'utf8').split('\n')[0];
    // The real virsh also prints a blank stdout line after a failed command (checked against libvirt-clients 9).
    expect(out).toEqual({ stdout: '\n', stderr: `${fixture}\n`, code: 1 });
  });

  it('without --connect qemu:///system it cannot see the domains (as a non-root virsh would)', async () => {
    host = createVmHostDir({ domains: [{ name: 'd', nics: [{ mac: '52:54:00:00:00:01' }] }] });
    const out = await virsh(host, 'domiflist', 'd');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^error: failed to connect to the hypervisor/);
  });

  it('hostile names are data in the stub too; state changes take effect at once', async () => {
    const pwned = join(tmpdir(), `pwned-stub-${process.pid}-${Date.now()}`);
    const hostile = `x'; touch ${pwned}; '`;
    host = createVmHostDir({ domains: [{ name: hostile, nics: [{ mac: '52:54:00:00:00:01' }] }, { name: '*', nics: [{ mac: '52:54:00:00:00:02' }] }] });
    const batch = buildDomiflistBatch([
      { uri: 'qemu:///system', domain: hostile },
      { uri: 'qemu:///system', domain: 'other' },
      { uri: 'qemu:///system', domain: '*' },
    ]);
    const env = { PATH: `${host.binDir}:/usr/bin:/bin` };
    const once = async () => splitDomiflistBatch(batch, [{ ...(await run('/bin/sh', ['-c', batch.commands[0]!], { env })), code: 0 }]).domains;
    const first = await once();
    expect(first.map((p) => p.kind)).toEqual(['found', 'missing', 'found']);
    expect(existsSync(pwned)).toBe(false);
    host.update({ domains: [{ name: 'other', nics: [{ mac: '52:54:00:00:00:03' }], running: false }] });
    const second = await once();
    expect(second.map((p) => p.kind)).toEqual(['missing', 'found', 'missing']);
    expect(second[1]).toMatchObject({ kind: 'found', nics: [{ interface: '-', mac: '52:54:00:00:00:03' }] });
    expect(JSON.parse(readFileSync(host.statePath, 'utf8'))).toEqual({ domains: [{ name: 'other', nics: [{ mac: '52:54:00:00:00:03' }], running: false }] });
  });
});
