import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { describeMaasErrorBody, MaasApiError } from '../../src/adapters/maas/maas-api-error.ts';
import { describeError } from '../../src/core/errors.ts';
import { createRedactor, MAX_SCANNED_CHARS } from '../../src/core/redact.ts';
import { Secret } from '../../src/core/secret.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';

/*
 * Attacks through what MAAS sends back: text that made the redactor quadratic (issue 27, item 1)
 * and error bodies that are not JSON but quote a BMC password (item 3).
 */

const KEY = 'consumer0000:tokenkey0000:tokensecret0000000';
const simKey = randomApiKey();
const oneMachine = () => scenario({ machines: [machine({ system_id: 'm1', hostname: 'm1' })] });

/** Texts that made a pattern restart inside a run of its own characters, or rescan the text per ellipsis. */
function hostileShapes(size: number): Record<string, string> {
  const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  return {
    'dotted words (a.a.a…)': fill('a.'),
    'dashed words (a-a-a…)': fill('a-'),
    'JWT heads (eyJ-eyJ-…)': fill('eyJ-'),
    'URL schemes (a.b://…)': fill('a.b://'),
    'credential words (token token …)': fill('token '),
    'open quotes after keys (token="…)': fill('token="'),
    'ellipses (……)': fill('…'),
    'a known secret cut before ellipses': fill('canary-s…'),
  };
}

describe('redaction is linear in its input (item 1)', () => {
  const redact = createRedactor(['canary-secret-value-1234', 'canary:other:valuevalue'], { names: ['prod-badtoken'] });

  it('1 MB of each hostile shape is redacted in well under a second each (quadratic took minutes)', () => {
    // The budget has a wide margin: the quadratic patterns took ~10 s for 40 KB and would take hours here.
    const shapes = hostileShapes(1024 * 1024);
    const slow: string[] = [];
    for (const [name, text] of Object.entries(shapes)) {
      const started = performance.now();
      redact(text);
      const ms = performance.now() - started;
      if (ms > 3_000) slow.push(`${name}: ${Math.round(ms)} ms`);
    }
    expect(slow).toEqual([]);
  });

  it('outside text longer than the cap is cut before any pattern runs, and says so', () => {
    const out = redact(`${'x'.repeat(MAX_SCANNED_CHARS)}token: hunter2hunter2`);
    expect(out.length).toBeLessThan(MAX_SCANNED_CHARS + 100);
    expect(out).toMatch(/… \[\d+ more characters not shown\]$/);
    expect(out).not.toContain('hunter2');
  });

  it('a cut secret is still found after many ellipses', () => {
    expect(redact(`${'…'.repeat(10_000)} canary-secret-val… ok`)).toMatch(/ \[redacted\]… ok$/);
  });
});

describe('a MAAS 500 with 150 KB of dotted words in its JSON detail (item 1)', () => {
  let sim: MaasSimulator;
  beforeAll(async () => {
    sim = await startMaasSimulator({ scenario: oneMachine(), apiKeys: [simKey] });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('becomes a short error at once: the body is bounded before it is redacted', async () => {
    sim.injectFaults({ status: 500, count: 3, body: { detail: 'a.'.repeat(75_000) } });
    const client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(simKey, 'test') }, { backoffMs: 1, retries: 0 });
    try {
      const err = await client.listMachines().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(MaasApiError);
      expect((err as MaasApiError).message.length).toBeLessThan(800);
      expect((err as MaasApiError).message).toMatch(/^MAAS region-a answered 500 to GET machines\//);
    } finally {
      await client.close();
    }
  });
});

describe('a MAAS error body that is not JSON never shows an excerpt (item 3)', () => {
  const PASS = 'Bmc-Pa55-canary';
  const leaking: [string, string][] = [
    ['a driver message quoting it', `Invalid power_pass '${PASS}' for BMC`],
    ['an HTML table', `<html><table><tr><td>power_pass</td><td>${PASS}</td></tr></table></html>`],
    ['percent-encoded JSON', `request=%7B%22power_pass%22%3A%22${PASS}%22%7D`],
    ['an arrow', `power_pass -> ${PASS}`],
    ['a tab', `power_pass\t${PASS}`],
    ['a space in the key', `power pass: ${PASS}`],
    ['an unquoted JSON-ish value', `"power_pass" : ${PASS}`],
    ['k_g in a body that is not valid JSON', `{"k_g": "${PASS}", oops}`],
  ];

  it.each(leaking)('%s: the password is not shown, a fixed sentence is', (_name, body) => {
    const shown = describeMaasErrorBody(body, KEY);
    expect(shown).not.toContain(PASS);
    expect(shown).toBe("(MAAS's answer is not shown: it is neither JSON nor one of MAAS's own reasons; the region's regiond.log has it)");
  });

  it("MAAS's own plain-text reasons, as a real region sends them, are shown (the recorded 3.4.10 answers)", () => {
    const rows = readFileSync(new URL('../fixtures/maas-3.4.10/error-answers.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { label: string; status: number; contentType: string; body: string });
    const text = rows.filter((r) => !r.contentType.startsWith('application/json') && r.body !== '');
    expect(text.length).toBeGreaterThan(20);
    const hidden = text.filter((r) => describeMaasErrorBody(r.body, KEY).startsWith("(MAAS's answer is not shown"));
    expect(hidden.map((r) => r.label)).toEqual([]);
    // Whatever MAAS echoes of the OAuth exchange stays out: the token key, the signature base string.
    expect(rows.map((r) => describeMaasErrorBody(r.body, KEY)).join('\n')).not.toMatch(/nosuchtoken|fixtureAdminTokenSecret/);
  });

  it('a JSON body still loses its secret fields by key and keeps MAAS\'s words', () => {
    expect(describeMaasErrorBody(`{"power_pass": "${PASS}", "k_g": "${PASS}", "__all__": ["No BMC."]}`, KEY)).toBe('{"__all__":["No BMC."]}');
  });

  it('end to end: a 500 whose text body quotes the password reaches the caller without it', async () => {
    const sim = await startMaasSimulator({ scenario: oneMachine(), apiKeys: [simKey] });
    const client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(simKey, 'test') }, { backoffMs: 1, retries: 0 });
    try {
      sim.injectFaults({ status: 500, count: 1, body: `Invalid power_pass '${PASS}' for BMC` });
      const err = await client.powerParameters().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(MaasApiError);
      const everything = [describeError(err), inspect(err, { depth: 5 }), JSON.stringify(err)].join('\n');
      expect(everything).not.toContain(PASS);
      expect((err as MaasApiError).message).toMatch(/answered 500 to GET machines\/\?op=power_parameters: \(MAAS's answer is not shown/);
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
