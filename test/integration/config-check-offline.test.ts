import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli.ts';
import { checkConfig } from '../../src/edge/terminal/config-check.ts';

/*
 * `config check --offline` from a checkout: the configs the repository ships (examples/, and the
 * one in deploy/configmap.yaml) name env: variables this machine does not have and key files under
 * /secrets it does not mount. Their shape is checked; each secret left unread is named.
 */

const EXAMPLE = fileURLToPath(new URL('../../examples/maas-chatops.yaml', import.meta.url));

let dir: string;
let shipped: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'config-offline-'));
  shipped = join(dir, 'shipped.yaml');
  writeFileSync(shipped, (parse(readFileSync(new URL('../../deploy/configmap.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> }).data['maas-chatops.yaml'] as string);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function offline(path: string, env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['config', 'check', '--offline', '--config', path], { out: (s) => out.push(s), err: (s) => err.push(s) }, { PATH: process.env.PATH, ...env });
  return { code, out, err };
}

/** The secret references a config file's values name (not its comments), in the form the check prints them. */
function referencesIn(path: string): string[] {
  const found: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string' && /^(env|file):/.test(v)) found.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(parse(readFileSync(path, 'utf8')));
  return found.sort();
}

describe('maas-chatops config check --offline', () => {
  it.each([
    ['examples/maas-chatops.yaml', () => EXAMPLE],
    ['deploy/configmap.yaml', () => shipped],
  ])('passes the shipped %s with no env and no /secrets, naming each secret it did not read', async (_name, pathOf) => {
    const path = pathOf();
    const r = await offline(path);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^config .*: valid \(\d+ MAAS regions?, \d+ sites?, \d+ clusters?\)$/);
    const unread = r.out.filter((l) => l.startsWith('secret ')).map((l) => /\(((?:env|file):[^)]+)\): not read \(--offline/.exec(l)?.[1]);
    expect(unread.sort()).toEqual(referencesIn(path));
    expect(r.out.at(-2)).toBe(`${unread.length} secrets not read: run \`maas-chatops config check\` without --offline where the workers run (their env and /secrets) to read them`);
    expect(r.out.at(-1)).toBe('reachability: not probed (--offline)');
  });

  it('reads no file but the config itself', async () => {
    const read: string[] = [];
    const result = await checkConfig({ path: EXAMPLE, env: {}, offline: true, readSecrets: false, readFile: (p) => (read.push(p), readFileSync(p, 'utf8')) });
    expect(result.code).toBe(0);
    expect(read).toEqual([EXAMPLE]);
  });

  it('still refuses a config of the wrong shape, and an env: variable that is set to a malformed value', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, readFileSync(EXAMPLE, 'utf8').replace('maas: region-a', 'maas: region-x'));
    const shape = await offline(bad);
    expect(shape.code).toBe(64);
    expect(shape.out.join('\n')).toContain('no MAAS region "region-x"');
    const value = await offline(EXAMPLE, { MAAS_REGION_A_KEY: 'not-a-key' });
    expect(value.code).toBe(64);
    expect(value.out.join('\n')).toContain('maas.region-a.apiKey: not a MAAS API key');
  });
});
