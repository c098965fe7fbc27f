import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The repository stands alone: what a reader needs is in it. No doc, message, comment or test
 * sends the reader (or reads) beside the checkout, into notes a user of the repository never has.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What a checkout holds: everything but installed, built and generated trees. */
const NOT_SOURCE = /^(node_modules|\.git|dist|coverage|\.lab)(\/|$)/;
const files = (readdirSync(ROOT, { recursive: true }) as string[]).filter((f) => !NOT_SOURCE.test(f));
const textFiles = files.filter((f) => /\.(ts|js|md|ya?ml|json|sh)$|^\.ci\/run$|^Dockerfile$/.test(f) && f !== 'package-lock.json' && !f.startsWith('test/fixtures/'));

// Split so that this file does not match itself.
const OUTSIDE = [['..', '/shared'].join(''), ['/work', '/shared'].join(''), ['CONTRACT', '.md'].join(''), ['FACTS', '.md'].join(''), ['DESIGN', '.md'].join(''), ['operator', ' contract'].join('')];

describe('the repository stands alone', () => {
  it('has no file pointing outside the checkout for what a reader needs', () => {
    expect(textFiles.length).toBeGreaterThan(100);
    // The brief's incident numbers mean nothing here: the README names the incidents in words.
    const incidentNumber = new RegExp(['\\bseed', ' 00\\d'].join(''), 'i');
    const hits: string[] = [];
    for (const file of textFiles) {
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const word of OUTSIDE) if (line.includes(word)) hits.push(`${file}:${i + 1}: ${word}`);
        if (incidentNumber.test(line)) hits.push(`${file}:${i + 1}: ${incidentNumber.exec(line)?.[0]}`);
      });
    }
    expect(hits).toEqual([]);
  });

  it('holds no Redis snapshot (a redis-server run from the checkout writes dump.rdb there)', () => {
    expect(files.filter((f) => f.endsWith('.rdb') || f.endsWith('.aof'))).toEqual([]);
  });
});
