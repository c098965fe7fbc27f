import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMaasClient } from '../../src/adapters/maas/client.ts';
import { describeMaasErrorBody, MaasApiError } from '../../src/adapters/maas/maas-api-error.ts';
import { SECRET_FIELD_SENTENCE, SECRET_MESSAGE_SENTENCE, submittedSecrets } from '../../src/adapters/maas/error-body-secrets.ts';
import { describeError } from '../../src/core/errors.ts';
import { createRedactor, MAX_SCANNED_CHARS } from '../../src/core/redact.ts';
import { Secret } from '../../src/core/secret.ts';
import { machine, randomApiKey, scenario, startMaasSimulator, type MaasSimulator } from '../../lab/maas-sim/index.ts';

/*
 * Attacks through what MAAS sends back: text that made the redactor quadratic (issue 27, item 1)
 * and error bodies that quote a BMC password: not JSON (item 3), or a valid JSON form error.
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

  // No clock here: the bound is this test's timeout. The linear redactor needs well under a second for all of
  // them; the quadratic patterns took ~10 s for 40 KB and would take hours at this size. Figures: bench/redaction.ts.
  it('1 MB of each hostile shape is redacted, harmless ones left whole, within the test timeout (quadratic took hours)', () => {
    const size = 1024 * 1024;
    const redactions: Record<string, number | 'unchanged'> = {};
    for (const [name, text] of Object.entries(hostileShapes(size))) {
      const out = redact(text);
      redactions[name] = out === text ? 'unchanged' : (out.match(/\[redacted\]/g) ?? []).length;
    }
    expect(redactions).toEqual({
      'dotted words (a.a.a…)': 'unchanged',
      'dashed words (a-a-a…)': 'unchanged',
      'JWT heads (eyJ-eyJ-…)': 'unchanged',
      'URL schemes (a.b://…)': 'unchanged',
      'credential words (token token …)': 'unchanged',
      // `token="token="…`: each key's value runs to the next quote, so every other key is a value.
      'open quotes after keys (token="…)': Math.floor(size / 'token="'.length / 2),
      'ellipses (……)': 'unchanged',
      // Every whole `canary-s…` (the secret cut before its ellipsis) is caught; the partial one at the end is not the secret.
      'a known secret cut before ellipses': Math.floor(size / 'canary-s…'.length),
    });
  }, 30_000);

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

  it('a JSON body shows a fixed sentence for each secret field and keeps MAAS\'s other words', () => {
    expect(JSON.parse(describeMaasErrorBody(`{"power_pass": "${PASS}", "k_g": "${PASS}", "__all__": ["No BMC."]}`, KEY))).toEqual({ power_pass: [SECRET_FIELD_SENTENCE], k_g: [SECRET_FIELD_SENTENCE], __all__: ['No BMC.'] });
  });

  it('end to end: a 400 form error whose JSON quotes the password reaches the caller without it', async () => {
    const sim = await startMaasSimulator({ scenario: oneMachine(), apiKeys: [simKey] });
    const client = createMaasClient({ name: 'region-a', url: sim.url, apiKey: new Secret(simKey, 'test') }, { backoffMs: 1, retries: 0 });
    try {
      sim.injectFaults({ status: 400, count: 1, body: { power_parameters: [`Power password: '${PASS}' is not valid.`], hostname: ['This field is required.'] } });
      const err = await client.powerParameters().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(MaasApiError);
      const everything = [describeError(err), inspect(err, { depth: 5 }), JSON.stringify(err)].join('\n');
      expect(everything).not.toContain(PASS);
      expect((err as MaasApiError).body).toBe(JSON.stringify({ power_parameters: [SECRET_MESSAGE_SENTENCE], hostname: ['This field is required.'] }));
    } finally {
      await client.close();
      await sim.close();
    }
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

describe('a valid-JSON MAAS form error that quotes a password (Django field -> messages)', () => {
  const PASS = 'Bmc-Pa55-canary';
  const cases: [string, string, unknown][] = [
    ['a power_parameters message with the sub-field label (DictCharField: "Power password: …")', `{"power_parameters": ["Power password: '${PASS}' is not a valid choice."]}`, { power_parameters: [SECRET_MESSAGE_SENTENCE] }],
    ['a form-wide message naming power_pass', `{"__all__": ["Invalid power_pass '${PASS}' for BMC"]}`, { __all__: [SECRET_MESSAGE_SENTENCE] }],
    ['the K_g key by its label', `{"power_parameters": ["K_g BMC key: ${PASS} must be hexadecimal."], "zone": ["No such zone(s): x."]}`, { power_parameters: [SECRET_MESSAGE_SENTENCE], zone: ['No such zone(s): x.'] }],
    ['a token secret by its label', `{"power_parameters": ["Proxmox API token secret: ${PASS}"]}`, { power_parameters: [SECRET_MESSAGE_SENTENCE] }],
    ['a space for the underscore ("power pass")', `{"__all__": ["power pass ${PASS} rejected"]}`, { __all__: [SECRET_MESSAGE_SENTENCE] }],
    ['a JSON list of messages (MAASAPIValidationError without error_dict)', `["Power password: ${PASS}", "Power user: too long"]`, [SECRET_MESSAGE_SENTENCE, 'Power user: too long']],
    ['a secret key nested in a field', `{"power_parameters": {"power_pass": ["${PASS}"], "power_address": ["bad"]}}`, { power_parameters: { power_pass: [SECRET_FIELD_SENTENCE], power_address: ['bad'] } }],
    ['a field that is itself a secret (k_g)', `{"k_g": ["'${PASS}' is too long"]}`, { k_g: [SECRET_FIELD_SENTENCE] }],
  ];

  it.each(cases)('%s: the password is not shown, a fixed sentence stands for that field', (_name, body, expected) => {
    const shown = describeMaasErrorBody(body, KEY);
    expect(shown).not.toContain(PASS);
    expect(JSON.parse(shown)).toEqual(expected);
  });

  it('a message quoting a secret value this request submitted is replaced, whatever field it is under', () => {
    const secrets = submittedSecrets([['power_parameters', JSON.stringify({ power_pass: PASS, power_user: 'admin' })], ['hostname', 'east-e01']]);
    expect(secrets).toEqual([PASS]);
    const shown = describeMaasErrorBody(`{"hostname": ["'${PASS}' is not valid."], "zone": ["'admin' is not a zone."]}`, KEY, secrets);
    expect(JSON.parse(shown)).toEqual({ hostname: [SECRET_MESSAGE_SENTENCE], zone: ["'admin' is not a zone."] });
  });

  it("MAAS's recorded 3.4.10 JSON form errors are shown as MAAS wrote them, quoted values included", () => {
    const rows = readFileSync(new URL('../fixtures/maas-3.4.10/error-answers.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { label: string; contentType: string; body: string });
    const json = rows.filter((r) => r.contentType.startsWith('application/json'));
    expect(json.map((r) => r.label)).toContain('iface-mac-malformed');
    for (const row of json) expect(JSON.parse(describeMaasErrorBody(row.body, KEY)), row.label).toEqual(JSON.parse(row.body));
  });
});
