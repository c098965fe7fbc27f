import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVmHostDir, type VmHostDir, type VmHostState } from '../../../lab/vmhost-sim/virsh-stub.ts';
import { changesDefinition, parseLifecycleLine, virshEventCommand } from '../../../src/adapters/ssh/virsh-events.ts';

/** A captured fixture's output, without its `# exit status` line, and that status. */
function fixture(name: string): { output: string; code: number } {
  const text = readFileSync(new URL(`../../fixtures/virsh/${name}`, import.meta.url), 'utf8');
  const match = /# exit status: (\d+)\n$/.exec(text);
  return { output: text.slice(0, match?.index), code: Number(match?.[1]) };
}

describe('virsh event lines (captured from libvirt-clients 9 against test:///default)', () => {
  it('has a test for every event fixture', () => {
    const files = readdirSync(new URL('../../fixtures/virsh/', import.meta.url)).filter((f) => f.startsWith('event-'));
    expect(files.sort()).toEqual(['event-all-with-event.txt', 'event-lifecycle-redefine-running.txt', 'event-lifecycle-redefine-shut-off.txt', 'event-lifecycle-replace-and-boot.txt']);
  });

  it('reads the undefine and redefine of a shut-off domain as Undefined, then Defined', () => {
    const events = fixture('event-lifecycle-redefine-shut-off.txt').output.split('\n').map(parseLifecycleLine).filter((e) => e !== null);
    expect(events).toEqual([
      { domain: 'test', event: 'Stopped', detail: 'Destroyed' },
      { domain: 'test', event: 'Undefined', detail: 'Removed' },
      { domain: 'test', event: 'Defined', detail: 'Added' },
    ]);
    expect(events.map(changesDefinition)).toEqual([false, true, true]);
  });

  it('a running domain redefined comes back as Defined Updated; a replace that boots it adds Started', () => {
    const running = fixture('event-lifecycle-redefine-running.txt').output.split('\n').map(parseLifecycleLine).filter((e) => e !== null);
    expect(running.map((e) => `${e.event} ${e.detail}`)).toEqual(['Undefined Removed', 'Defined Updated']);
    const replaced = fixture('event-lifecycle-replace-and-boot.txt').output.split('\n').map(parseLifecycleLine).filter((e) => e !== null);
    expect(replaced.map((e) => e.event)).toEqual(['Stopped', 'Undefined', 'Defined', 'Started']);
  });

  it('takes the --timestamp prefix, a detail with blanks and a quote in the name; ignores the loop summary', () => {
    expect(parseLifecycleLine("2026-12-01 23:09:23.805+0000: event 'lifecycle' for domain 'test': Undefined Removed")).toEqual({ domain: 'test', event: 'Undefined', detail: 'Removed' });
    expect(parseLifecycleLine("event 'lifecycle' for domain 'it's': Started Event wakeup")).toEqual({ domain: "it's", event: 'Started', detail: 'Event wakeup' });
    for (const line of ['event loop timed out', 'events received: 2', '', "event 'reboot' for domain 'test'"]) expect(parseLifecycleLine(line)).toBeNull();
  });
});

describe('the vmhost-sim virsh stub streams events as the real virsh prints them', () => {
  let host: VmHostDir | undefined;
  afterEach(() => host?.remove());

  function runVirsh(dir: VmHostDir, args: string[]): { lines: string[]; done: Promise<{ stdout: string; stderr: string; code: number | null }> } {
    const child = spawn(join(dir.binDir, 'virsh'), args);
    const lines: string[] = [];
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      lines.splice(0, lines.length, ...stdout.split('\n').slice(0, -1));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return { lines, done: new Promise((resolve) => child.on('close', (code) => resolve({ stdout, stderr, code }))) };
  }

  it('prints each event appended after it started, line by line, then the timeout summary of the fixture', async () => {
    const state: VmHostState = { domains: [{ name: 'test', nics: [] }], events: [{ domain: 'old', event: 'Defined', detail: 'Added' }] };
    host = createVmHostDir(state);
    const run = runVirsh(host, ['--connect', 'qemu:///system', 'event', '--loop', '--event', 'lifecycle', '--timeout', '2']);
    // The old event came before it listened: it is not printed.
    await waitFor(() => host?.eventListeners() === 1);
    host.update({ ...state, events: [...(state.events ?? []), { domain: 'test', event: 'Undefined', detail: 'Removed' }] });
    await waitFor(() => run.lines.length === 1);
    host.update({ ...state, events: [...(state.events ?? []), { domain: 'test', event: 'Undefined', detail: 'Removed' }, { domain: 'test', event: 'Defined', detail: 'Updated' }] });
    const end = await run.done;
    const expected = fixture('event-lifecycle-redefine-running.txt');
    expect({ stdout: end.stdout, code: end.code }).toEqual({ stdout: expected.output, code: expected.code });
  });

  it('refuses --all with --event as virsh 9 does (the fixture)', async () => {
    host = createVmHostDir({ domains: [] });
    const end = await runVirsh(host, ['--connect', 'qemu:///system', 'event', '--all', '--loop', '--event', 'lifecycle']).done;
    const expected = fixture('event-all-with-event.txt');
    expect(end).toEqual({ stderr: expected.output.split('\n')[0] + '\n', stdout: '\n', code: expected.code });
  });
});

describe('the remote command of the watch (run here by /bin/sh, the stub first on PATH)', () => {
  let host: VmHostDir | undefined;
  afterEach(() => host?.remove());

  function start(dir: VmHostDir) {
    const child = spawn('/bin/sh', ['-c', virshEventCommand('qemu:///system')], { env: { ...process.env, PATH: `${dir.binDir}:${process.env.PATH ?? '/usr/bin:/bin'}` } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, done, out: () => stdout };
  }

  const virshPid = (dir: VmHostDir) => Number(readFileSync(join(dir.dir, 'event-listeners.log'), 'utf8').split(' ')[0]);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('streams the events, and its stdin ending (the SSH session gone) ends virsh: nothing is left behind', async () => {
    const state: VmHostState = { domains: [{ name: 'd', nics: [] }] };
    host = createVmHostDir(state);
    const run = start(host);
    await waitFor(() => host?.eventListeners() === 1);
    host.update({ ...state, events: [{ domain: 'd', event: 'Undefined', detail: 'Removed' }] });
    await waitFor(() => run.out().includes('\n'));
    expect(run.out()).toBe("event 'lifecycle' for domain 'd': Undefined Removed\n");
    const pid = virshPid(host);
    run.child.stdin.end();
    await run.done;
    await waitFor(() => !alive(pid));
  });

  it('ends with virsh\'s own status when virsh ends first, though the session is still open', async () => {
    const state: VmHostState = { domains: [] };
    host = createVmHostDir(state);
    const run = start(host);
    await waitFor(() => host?.eventListeners() === 1);
    host.update({ ...state, libvirtRestarts: 1 });
    const end = await run.done;
    expect(end).toEqual({ code: 1, stdout: 'events received: 0\n\n', stderr: 'error: Disconnected from qemu:///system due to end of file\n' });
  });
});

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!predicate()) throw new Error('condition not met');
}
