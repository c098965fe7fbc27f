import { isSecretFieldName } from './secret-fields.ts';

/*
 * MAAS's JSON error bodies are Django form errors: MAASAPIValidationError.make_http_response
 * (src/maasserver/exceptions.py) sends `json.dumps(message_dict)`, a map of field -> messages, or
 * a JSON list of messages. Messages may quote what was submitted (Django's `%(value)s`, and
 * compose_invalid_choice_text in src/maasserver/utils/forms.py: the recorded 3.4.10 row
 * `iface-mac-malformed` answers `{"mac_address": ["'52:54:00:zz:00:01' is not a valid MAC
 * address."]}`). Power parameters are one field whose sub-fields' messages are prefixed with the
 * sub-field's label (DictCharField.clean_sub_fields in src/maasserver/config_forms.py: "Power
 * password: …"), and MAAS validates the machine's stored parameters along with the submitted ones
 * (WithPowerTypeMixin._get_power_parameters in src/maasserver/forms/__init__.py). So a field's
 * messages are replaced by a fixed sentence when the field is a secret, when a message names one
 * (power_pass, "Power password", "K_g BMC key", "API token secret"…), or when it quotes a secret
 * value this request submitted.
 */

export const SECRET_FIELD_SENTENCE = "(MAAS's message about this field is not shown: the field holds a secret)";
export const SECRET_MESSAGE_SENTENCE = "(MAAS's message about this field is not shown: it is about a secret and may quote it)";

/** Submitted values shorter than this are not looked for in messages: too likely to match by chance. */
const MIN_QUOTED_SECRET_CHARS = 4;

/** The secret values a request submitted: form fields of a secret name, and secret keys of a JSON field (power_parameters). */
export function submittedSecrets(form: readonly (readonly [string, string])[] | undefined): string[] {
  const found: string[] = [];
  for (const [name, value] of form ?? []) {
    if (isSecretFieldName(name)) found.push(value);
    else if (/^\s*\{/.test(value)) found.push(...secretValuesOf(parseOrUndefined(value)));
  }
  return found.filter((v) => v.length >= MIN_QUOTED_SECRET_CHARS);
}

/** A parsed MAAS error body with every message about a secret replaced, field by field. */
export function withoutSecretMessages(body: unknown, secrets: readonly string[] = []): unknown {
  if (typeof body === 'string') return aboutSecret(body, secrets) ? SECRET_MESSAGE_SENTENCE : body;
  if (Array.isArray(body)) return body.map((item) => withoutSecretMessages(item, secrets));
  if (!isObject(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [field, messages] of Object.entries(body)) {
    if (isSecretFieldName(field)) out[field] = [SECRET_FIELD_SENTENCE];
    else if (stringsIn(messages).some((m) => aboutSecret(m, secrets))) out[field] = [SECRET_MESSAGE_SENTENCE];
    else out[field] = withoutSecretMessages(messages, secrets);
  }
  return out;
}

/** A message that names a secret field or label, or quotes a submitted secret value. */
function aboutSecret(message: string, secrets: readonly string[]): boolean {
  if (secrets.some((secret) => message.includes(secret))) return true;
  // Word by word, and each pair joined by `_`, so "Power password" is seen as power_password too.
  const words = message.match(/[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*/g) ?? [];
  return words.some((word, i) => isSecretFieldName(word) || (i > 0 && isSecretFieldName(`${words[i - 1]}_${word}`)));
}

function secretValuesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(secretValuesOf);
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => (isSecretFieldName(k) ? stringsIn(v) : secretValuesOf(v)));
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  return isObject(value) ? Object.values(value).flatMap(stringsIn) : [];
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
