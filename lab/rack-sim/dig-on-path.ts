import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quoteArg } from '../../src/adapters/ssh/shell-quote.ts';

/** Is there an executable `program` on PATH? */
export function onPath(program: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface DigStub {
  /** A directory holding an executable `dig`: put it first on the SSH server's PATH. */
  dir: string;
  cleanup(): void;
}

/** A `dig` program backed by dig-stub.mjs, for machines without bind9-dnsutils. */
export function createDigStub(): DigStub {
  const dir = mkdtempSync(join(tmpdir(), 'maas-chatops-dig-'));
  const stub = fileURLToPath(new URL('./dig-stub.mjs', import.meta.url));
  writeFileSync(join(dir, 'dig'), `#!/bin/sh\nexec ${quoteArg(process.execPath)} ${quoteArg(stub)} "$@"\n`);
  chmodSync(join(dir, 'dig'), 0o755);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * PATH directories the simulated rack's SSH server needs so that `dig` exists there:
 * none when the real dig is installed, else the stub's.
 */
export function digPathPrefix(path = process.env.PATH ?? ''): { pathPrefix: string[]; cleanup(): void; stubbed: boolean } {
  if (onPath('dig', path)) return { pathPrefix: [], cleanup: () => undefined, stubbed: false };
  const stub = createDigStub();
  return { pathPrefix: [stub.dir], cleanup: stub.cleanup, stubbed: true };
}
