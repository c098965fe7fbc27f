#!/usr/bin/env node
// Which code runs: in a source checkout (src/ beside this file, dev dependencies installed) the
// TypeScript sources, through tsx, so an edit needs no build step; anywhere else (an installed
// package, the image) the compiled dist/ with plain node. A checkout without tsx (npm ci
// --omit=dev) falls back to dist/ when `npm run build` made one.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli.ts', import.meta.url);
const compiled = new URL('../dist/src/cli.js', import.meta.url);

async function tsxRegister() {
  try {
    return (await import('tsx/esm/api')).register;
  } catch {
    return undefined;
  }
}

let entry;
const register = existsSync(sources) ? await tsxRegister() : undefined;
if (register) {
  register();
  entry = sources;
} else if (existsSync(compiled)) {
  entry = compiled;
} else {
  process.stderr.write('maas-chatops: no build to run: run `npm ci` (the sources run through tsx) or `npm run build` (dist/)\n');
  process.exit(64);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
