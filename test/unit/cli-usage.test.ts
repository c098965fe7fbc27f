import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.ts';

/** The CLI's usage surface (no config, no MAAS): help, version, suggestions and the usage exit status. */
async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) }, { PATH: process.env.PATH });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('maas-chatops usage', () => {
  it('--version prints the package version and exits 0', async () => {
    expect(await run('--version')).toEqual({ code: 0, out: version, err: '' });
    expect((await run('-V')).out).toBe(version);
  });

  it('--help lists every subcommand on stdout with the exit statuses, exit 0', async () => {
    const r = await run('--help');
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    for (const command of ['serve', 'bot', 'worker', 'lab', 'sites', 'audit', 'dns-check', 'resolver-check', 'mac-diff', 'fix-macs', 'fix-dns', 'fix-resolver']) {
      expect(r.out).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(r.out).toContain('64 usage or config error');
    expect((await run('help')).code).toBe(0);
  });

  it('each subcommand has its own --help: its target, and the options it takes', async () => {
    const r = await run('fix-dns', '--help');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('Usage: maas-chatops fix-dns [options] <cluster>');
    expect(r.out).toContain('--apply');
    expect(r.out).toContain('--config <file>');
    expect((await run('help', 'mac-diff')).out.split('\n')[0]).toBe('Usage: maas-chatops mac-diff [options] <site|all>');
  });

  it('ends each help with the exit statuses of that command: the checks\' for checks and fixes, the process roles\' for serve, bot and worker, none where neither applies', async () => {
    const help = async (...argv: string[]) => (await run(...argv, '--help')).out;
    for (const command of ['dns-check', 'fix-macs', 'audit']) expect(await help(command), command).toContain('1 problems found or a plan');
    for (const command of ['serve', 'bot', 'worker']) {
      const text = await help(command);
      expect(text, command).toContain('0 stopped on SIGTERM or SIGINT, 2 could not start (Slack unreachable, say) or did not stop within 10 s');
      expect(text, command).not.toMatch(/problems found|--json/);
    }
    expect(await help('config', 'check')).toContain('2 a peer not reached, 64 a config or secret error');
    for (const command of ['lab', 'config']) expect(await help(command), command).not.toContain('Exit status');
  });

  it('shows each command only the options it takes, and lists the audit trail apart from the checks that need no Redis', async () => {
    const options = async (command: string) => (await run(command, '--help')).out.split('Global Options:')[0] ?? '';
    expect(await options('fix-dns')).toContain('--apply');
    expect(await options('dns-check')).toContain('--json');
    for (const command of ['dns-check', 'sites', 'audit', 'worker']) expect(await options(command), command).not.toContain('--apply');
    expect(await options('worker')).not.toContain('--json');
    const help = (await run('--help')).out;
    const checks = help.slice(help.indexOf('Checks (inline, no Slack, no Redis):'), help.indexOf('\n\n', help.indexOf('Checks (inline')));
    expect(checks).toContain('dns-check');
    expect(checks).not.toMatch(/^ {2}(audit|timeline)\b/m);
    expect(help).toMatch(/Audit trail \(reads Redis\):\n {2}audit /);
  });

  it('--help into a reader that has already closed (| head -0) exits 0 and prints no EPIPE trace on stderr', async () => {
    const bin = fileURLToPath(new URL('../../bin/maas-chatops.js', import.meta.url));
    const child = spawn(process.execPath, [bin, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The read end closes before the program starts writing: its first write gets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(stderr).toBe('');
  });

  it('a mistyped subcommand exits 64 and suggests the one meant', async () => {
    const r = await run('dns-chek', 'prod');
    expect(r.code).toBe(64);
    expect(r.out).toBe('');
    expect(r.err).toContain("unknown command 'dns-chek'");
    expect(r.err).toContain('Did you mean dns-check?');
  });

  it('usage errors exit 64 on stderr: no command, a missing or extra target, an unknown option', async () => {
    const none = await run();
    expect(none.code).toBe(64);
    expect(none.out).toBe('');
    expect(none.err).toContain('Usage: maas-chatops <command>');
    expect((await run('resolver-check')).err).toContain("missing required argument 'site|all'");
    expect((await run('resolver-check')).code).toBe(64);
    expect((await run('dns-check', 'prod', 'staging')).code).toBe(64);
    const bad = await run('sites', '--jsno');
    expect(bad.code).toBe(64);
    expect(bad.err).toContain("unknown option '--jsno'");
    expect(bad.err).toContain('Did you mean --json?');
  });

  it('takes the options before or after the subcommand and its target', async () => {
    const before = await run('--config', '/nonexistent/maas-chatops.yaml', 'dns-check', 'prod');
    const after = await run('dns-check', 'prod', '--json', '--config=/nonexistent/maas-chatops.yaml');
    for (const r of [before, after]) {
      expect(r.code).toBe(64);
      expect(r.err).toContain('/nonexistent/maas-chatops.yaml');
    }
  });

  it('still takes --json before the command, as scripts written for the one global option do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-usage-'));
    try {
      const config = join(dir, 'maas-chatops.yaml');
      writeFileSync(config, 'maas:\n  region-a: { url: http://127.0.0.1:5240/MAAS, apiKey: "ck1234567890abcdefgh:tk1234567890abcdefgh:ts1234567890abcdefghijkl" }\n');
      for (const argv of [['--json', 'sites', '--config', config], ['sites', '--json', '--config', config]]) {
        const r = await run(...argv);
        expect(r.code, argv.join(' ')).toBe(0);
        expect(JSON.parse(r.out)).toMatchObject({ regions: [{ name: 'region-a', url: 'http://127.0.0.1:5240/MAAS' }] });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
