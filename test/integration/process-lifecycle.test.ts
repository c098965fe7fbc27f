import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../lab/private-redis.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/redis.ts';

/*
 * The real program as an operator starts it (bin/maas-chatops.js, a child process): its stderr is
 * JSON lines only, and SIGTERM stops it even when Redis never answered.
 */

const BIN = fileURLToPath(new URL('../../bin/maas-chatops.js', import.meta.url));
const CONFIG = `maas:
  region-a:
    url: http://127.0.0.1:9/MAAS
    apiKey: env:MAAS_KEY
sites:
  site-b:
    maas: region-a
    rack:
      resolver: 127.0.0.1
      probe: ssh
      ssh: { user: ops, privateKey: file:/nonexistent/rack_ed25519, hostKey: "SHA256:${'A'.repeat(43)}" }
schedules: { resolver: 5m }
`;

interface Started {
  child: ChildProcess;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(role: string, env: NodeJS.ProcessEnv, configPath: string): Started {
  let stderr = '';
  const child = spawn(process.execPath, [BIN, role, '--config', configPath], { env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', MAAS_KEY: 'aaaaaaaaaaaa:bbbbbbbbbbbb:cccccccccccccccc', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, stderr: () => stderr, exit };
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line.slice(0, 200)}`);
      }
    });
}

describe('maas-chatops processes', () => {
  let dir: string;
  let running: Started | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
    writeFileSync(join(dir, 'maas-chatops.yaml'), CONFIG);
    return () => rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
    running = undefined;
  });

  it('a worker that never reached Redis stops on one SIGTERM, and every stderr line is one JSON object', async () => {
    const port = await freePort();
    // A bot token (never used: no job runs) brings the Slack client and its debug lines.
    running = start('worker', { REDIS_URL: `redis://127.0.0.1:${port}`, SLACK_BOT_TOKEN: 'xoxb-never-used', SLACK_API_URL: `http://127.0.0.1:${port}/api/`, LOG_LEVEL: 'debug' }, join(dir, 'maas-chatops.yaml'));
    const started = running;
    await waitUntil(() => started.stderr().includes('"msg":"maas-chatops started"'), 60_000, 100);
    // Let the BullMQ workers retry the connection a few times: each retry fails the same way.
    await waitUntil(() => (started.stderr().match(/ECONNREFUSED/g) ?? []).length >= 3, 20_000, 50);
    started.child.kill('SIGTERM');
    const exit = await started.exit;
    expect(exit).toEqual({ code: 0, signal: null });
    const lines = jsonLines(started.stderr());
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['maas-chatops started', 'stopping: no new work; active jobs finish', 'stopped']));
    // One line per distinct worker error per 10 s, however many workers retried (their own timestamps tell).
    const workerErrors = lines.filter((l) => l.msg === 'worker error') as { err: string; time: number }[];
    expect(workerErrors.length).toBeGreaterThan(0);
    for (const [i, line] of workerErrors.entries()) {
      const previous = workerErrors.slice(0, i).filter((l) => l.err === line.err).pop();
      if (previous) expect(line.time - previous.time, line.err).toBeGreaterThanOrEqual(10_000);
    }
    // The rack key file does not exist: nothing read it, since no check ran.
    expect(started.stderr()).not.toContain('rack_ed25519');
    // One "component" key per line (a child logger of a child logger used to repeat it).
    expect(lines.some((l) => l.component === 'slack-web-api')).toBe(true);
    for (const line of started.stderr().split('\n').filter(Boolean)) expect((line.match(/"component":/g) ?? []).length, line).toBeLessThanOrEqual(1);
  }, 120_000);

  it('a bot without its Slack token says so on one JSON line and exits 64', async () => {
    running = start('bot', { REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, join(dir, 'maas-chatops.yaml'));
    const exit = await running.exit;
    expect(exit.code).toBe(64);
    const fatal = jsonLines(running.stderr()).filter((l) => l.level === 60);
    expect(fatal).toEqual([expect.objectContaining({ msg: 'maas-chatops bot could not start', code: 'CONFIG_INVALID', err: expect.stringMatching(/^SLACK_BOT_TOKEN is not set\. Export the bot token/) })]);
  }, 120_000);

  it('a config error of a process is one JSON line too, naming the key', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, CONFIG.replace('maas: region-a', 'maas: region-x'));
    running = start('worker', {}, bad);
    const exit = await running.exit;
    expect(exit.code).toBe(64);
    expect(jsonLines(running.stderr())).toEqual([expect.objectContaining({ level: 60, err: expect.stringContaining('sites.site-b.maas: no MAAS region "region-x"; known: region-a') })]);
  }, 120_000);
});
