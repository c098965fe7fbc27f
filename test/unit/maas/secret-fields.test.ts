import { describe, expect, it } from 'vitest';
import { describeMaasErrorBody } from '../../../src/adapters/maas/maas-api-error.ts';
import { SECRET_FIELD_SENTENCE } from '../../../src/adapters/maas/error-body-secrets.ts';
import { isSecretFieldName, withoutSecretFields } from '../../../src/adapters/maas/secret-fields.ts';

describe('secret fields of MAAS JSON, by key', () => {
  it('names every secret field of the MAAS power drivers and the generic ones', () => {
    for (const name of ['power_pass', 'k_g', 'password', 'key', 'power_token', 'power_token_secret', 'secret', 'token', 'Password']) expect(isSecretFieldName(name), name).toBe(true);
    for (const name of ['power_user', 'power_address', 'power_id', 'hostname', 'system_id', 'mac_address', 'status']) expect(isSecretFieldName(name), name).toBe(false);
  });

  it('drops them at any depth and keeps everything else', () => {
    const body = [{ system_id: 'abc', power_parameters: { power_address: 'qemu+ssh://u@h/system', power_pass: 'x', nested: [{ password: 'y', ok: 1 }] } }];
    expect(withoutSecretFields(body)).toEqual([{ system_id: 'abc', power_parameters: { power_address: 'qemu+ssh://u@h/system', nested: [{ ok: 1 }] } }]);
  });

  it('an error body: JSON shows a fixed sentence for its secret fields, unknown text is not shown at all, the API key never shows', () => {
    expect(describeMaasErrorBody('{"power_pass": "ADMIN", "detail": "no"}', 'consumer00:abcdefghijkl:secret000')).toBe(JSON.stringify({ power_pass: [SECRET_FIELD_SENTENCE], detail: 'no' }));
    const text = describeMaasErrorBody(`failed for token_key abcdefghijkl: password=a;b ${'z'.repeat(1000)}`, 'consumer00:abcdefghijkl:secret000');
    expect(text).toMatch(/^\(MAAS's answer is not shown/);
    expect(describeMaasErrorBody("Authorization Error: 'Invalid access token: abcdefghijkl'", 'consumer00:abcdefghijkl:secret000')).toBe("Authorization Error: 'Invalid access token: [redacted]'");
  });
});
