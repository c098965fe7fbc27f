import { describe, expect, it } from 'vitest';
import { isRefusedSkew, maasClockOffsetS, readAuthRefusal } from '../../../src/adapters/maas/auth-refusal.ts';
import { isClockSkew, MaasApiError } from '../../../src/adapters/maas/maas-api-error.ts';
import { recordedAnswers } from '../../helpers/maas-answers.ts';

const row = (label: string) => recordedAnswers().find((r) => r.label === label)!;

describe('a MAAS 401, read by its structure (recorded 3.4.10 answers)', () => {
  it('the wrong-secret answer is classified and its text, which holds the real secret, is not kept', () => {
    const refusal = readAuthRefusal(row('wrong-secret').body);
    expect(refusal.kind).toBe('invalid-signature');
    expect(refusal.text).not.toContain('fixtureAdminTokenSecretQ7wLx9vK2mZp');
    const err = new MaasApiError({ region: 'r', status: 401, body: row('wrong-secret').body, method: 'GET', path: 'users/?op=whoami' });
    expect(`${err.message} ${err.body} ${JSON.stringify(err)}`).not.toContain('fixtureAdminTokenSecretQ7wLx9vK2mZp');
  });

  it.each([
    ['replay-2-same-nonce', 'nonce-used'],
    ['invalid-token', 'invalid-token'],
    ['whoami-badkey', 'invalid-key'],
  ])('%s is %s', (label, kind) => {
    expect(readAuthRefusal(row(label).body).kind).toBe(kind);
  });

  it('an expired timestamp is clock skew, named with the gap, and the hint is about the clock, not the key', () => {
    const body = row('old-timestamp').body;
    const refusal = readAuthRefusal(body);
    expect(refusal).toMatchObject({ kind: 'expired-timestamp', givenS: 1_000_000_000, maasNowS: 1_796_149_819 });
    const err = new MaasApiError({ region: 'r', status: 401, body, method: 'GET', path: 'users/?op=whoami', clockOffsetS: -400 });
    expect(isClockSkew(err)).toBe(true);
    expect(err.describe()).toMatch(/Clock skew, not the API key/);
    expect(err.describe()).toMatch(/400 s behind this host's/);
  });

  it('the Date header gives the offset; within 300 s is not skew', () => {
    const now = Date.parse('2026-12-01T20:00:00Z');
    expect(maasClockOffsetS('Tue, 01 Dec 2026 20:10:00 GMT', undefined, now)).toBe(600);
    expect(isRefusedSkew(600)).toBe(true);
    expect(isRefusedSkew(maasClockOffsetS('Tue, 01 Dec 2026 20:01:00 GMT', undefined, now))).toBe(false);
  });

  it('"Nonce already used" does not prove a write took no effect; another 401 does', () => {
    expect(new MaasApiError({ region: 'r', status: 401, body: row('replay-2-same-nonce').body, method: 'PUT', path: 'x/' }).provesNoEffect).toBe(false);
    expect(new MaasApiError({ region: 'r', status: 401, body: row('wrong-secret').body, method: 'PUT', path: 'x/' }).provesNoEffect).toBe(true);
  });
});
