import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../../lab/private-redis.ts';
import { main } from '../../src/cli.ts';
import { checkConfig } from '../../src/edge/terminal/config-check.ts';
import { TEST_REDIS_URL } from '../helpers/redis.ts';

const EXAMPLE = new URL('../../examples/maas-chatops.yaml', import.meta.url);
const KEY = 'ck1234567890abcd:tk1234567890abcd:ts1234567890abcdefgh';

let dir: string;
let maas: Server;
let maasPort: number;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'config-check-'));
  writeFileSync(join(dir, 'rack_key'), 'RACK-KEY-MATERIAL\n');
  maas = createServer((s) => s.destroy());
  await new Promise<void>((r) => maas.listen(0, '127.0.0.1', r));
  maasPort = (maas.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => maas.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(rackKey: string, sshPort: number): string {
  const path = join(dir, `config-${sshPort}.yaml`);
  writeFileSync(
    path,
    `maas:\n  region-a:\n    url: http://127.0.0.1:${maasPort}/MAAS\n    apiKey: env:MAAS_KEY\nsites:\n  site-b:\n    maas: region-a\n    rack:\n      resolver: 127.0.0.1\n      ssh: { host: 127.0.0.1, port: ${sshPort}, user: ops, privateKey: file:${rackKey} }\n`,
  );
  return path;
}

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s) }, { MAAS_KEY: KEY, REDIS_URL: TEST_REDIS_URL });
  return { code, out, err: err.join('\n') };
}

describe('maas-chatops config check', () => {
  it('reads every secret and says which peers answer: exit 2 when one does not', async () => {
    const sshPort = await freePort();
    const r = await run('config', 'check', '--config', writeConfig(join(dir, 'rack_key'), sshPort));
    expect(r.out).toEqual([
      expect.stringMatching(/^config .*: valid \(1 MAAS region, 1 site, 0 clusters\)$/),
      'secret sites.site-b.rack.ssh.privateKey (file:' + join(dir, 'rack_key') + '): read',
      `reach maas region-a 127.0.0.1:${maasPort}: reachable`,
      `reach ssh sites.site-b.rack 127.0.0.1:${sshPort}: unreachable (ECONNREFUSED)`,
      expect.stringMatching(/^reach redis .*: answers PING$/),
    ]);
    expect(r.code).toBe(2);
    expect(r.out.join('\n')).not.toContain('RACK-KEY-MATERIAL');
    expect(r.out.join('\n')).not.toContain('ts1234567890');
  });

  it('exits 64 naming the key and the file when a secret cannot be read, before probing anything', async () => {
    const r = await run('config', 'check', '--config', writeConfig(join(dir, 'missing_key'), await freePort()));
    expect(r.code).toBe(64);
    expect(r.out.at(-1)).toMatch(/^secret sites\.site-b\.rack\.ssh\.privateKey \(file:.*missing_key\): .*sites\.site-b\.rack\.ssh\.privateKey: cannot read .*missing_key \(ENOENT\)/);
    expect(r.out.some((l) => l.startsWith('reach '))).toBe(false);
  });

  it('accepts the example config of the repository and the one deploy/ ships, with their secrets in place', async () => {
    const secretFiles = (path: string) => (path.startsWith('/secrets/') ? `contents of ${path}` : readFileSync(path, 'utf8'));
    const shipped = (parse(readFileSync(new URL('../../deploy/configmap.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> }).data['maas-chatops.yaml'] as string;
    const shippedPath = join(dir, 'shipped.yaml');
    writeFileSync(shippedPath, shipped);
    for (const path of [EXAMPLE.pathname, shippedPath]) {
      const result = await checkConfig({ path, env: { MAAS_REGION_A_KEY: KEY }, readFile: secretFiles, offline: true });
      expect(result.lines.filter((l) => !l.endsWith(': read') && !l.startsWith('config ')), path).toEqual(['reachability: not probed (--offline)']);
      expect(result.code, path).toBe(0);
    }
  });
});
