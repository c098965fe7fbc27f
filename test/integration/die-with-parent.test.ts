import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const helper = fileURLToPath(new URL('../../lab/die-with-parent.ts', import.meta.url));
const started: number[] = [];

// When a check fails, the sleeper it left is ended here.
afterEach(() => {
  for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

/** A stand-in for a test worker: starts `sleep 600` tied to itself, prints its pid, then waits or exits. */
function startOwner(then: 'wait' | 'exit') {
  const script = `
    import { spawn } from 'node:child_process';
    import { dieWithParent } from ${JSON.stringify(helper)};
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    dieWithParent(child);
    console.log(child.pid);
    ${then === 'wait' ? 'setInterval(() => undefined, 1000);' : 'child.unref();'}`;
  const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = new Promise<number>((resolve) =>
    owner.stdout.once('data', (d: Buffer) => {
      const child = Number(String(d).trim());
      started.push(child);
      resolve(child);
    }),
  );
  const exited = new Promise<void>((resolve) => owner.once('exit', () => resolve()));
  return { owner, pid, exited };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded) for a process to be gone; a zombie left for init to reap counts as gone. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 250; i++) {
    if (!alive(pid) || (await isZombie(pid))) return true;
    await sleep(20);
  }
  return false;
}

async function isZombie(pid: number): Promise<boolean> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return / Z /.test(stat);
}

describe('a process started for a test dies with the process that started it', () => {
  it('when that process is killed with SIGKILL (no exit handlers run)', async () => {
    const { owner, pid } = startOwner('wait');
    const child = await pid;
    expect(alive(child)).toBe(true);
    owner.kill('SIGKILL');
    expect(await gone(child)).toBe(true);
  });

  it('when that process simply ends: the watchdog does not keep it running', async () => {
    const { pid, exited } = startOwner('exit');
    const child = await pid;
    await exited;
    expect(await gone(child)).toBe(true);
  });
});
