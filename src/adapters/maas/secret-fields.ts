/*
 * MAAS JSON can carry credentials: power_parameters (power_pass, k_g, password, key, power_token,
 * power_token_secret are the secret fields of provisioningserver/drivers/power/*.py) and whatever
 * an error body echoes. They are removed by key, from the parsed value, before any text is built.
 */

const SECRET_FIELD_NAMES = new Set(['power_pass', 'password', 'passwd', 'secret', 'token', 'key', 'k_g', 'private_key', 'api_key', 'apikey']);
const SECRET_FIELD_SUFFIX = /_(?:pass|password|passwd|passphrase|secret|token|private_key|api_key)$/i;

/** Whether a JSON field of that name holds a credential. */
export function isSecretFieldName(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_FIELD_NAMES.has(lower) || SECRET_FIELD_SUFFIX.test(lower);
}

/** A copy of a parsed JSON value without its secret fields, at any depth. */
export function withoutSecretFields<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => withoutSecretFields(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!isSecretFieldName(k)) out[k] = withoutSecretFields(v);
    return out as T;
  }
  return value;
}
