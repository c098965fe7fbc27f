import { parse } from 'yaml';

const USER_SECRET_KEYS = ['token', 'password', 'client-key-data'];
const AUTH_PROVIDER_SECRET_KEYS = ['access-token', 'id-token', 'refresh-token', 'client-secret'];

/**
 * The credential values inside a kubeconfig, for the redaction pass. Splitting the whole file into
 * lines and colon-separated pieces (as for an API key) would redact ordinary words such as
 * "server" and "cluster" from every message; only these values are secret.
 * Returns null when the text is not a kubeconfig we can read: then redact it the blunt way.
 */
export function kubeconfigSecretValues(text: string): string[] | null {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return null;
  }
  const users = (doc as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) return null;
  const values: string[] = [];
  for (const entry of users) {
    const user = (entry as { user?: Record<string, unknown> } | null)?.user ?? {};
    for (const key of USER_SECRET_KEYS) pushString(values, user[key]);
    const providerConfig = (user['auth-provider'] as { config?: Record<string, unknown> } | undefined)?.config ?? {};
    for (const key of AUTH_PROVIDER_SECRET_KEYS) pushString(values, providerConfig[key]);
    const execEnv = (user.exec as { env?: { value?: unknown }[] } | undefined)?.env ?? [];
    for (const v of execEnv) pushString(values, v?.value);
  }
  return values;
}

function pushString(out: string[], value: unknown): void {
  if (typeof value === 'string' && value.trim() !== '') out.push(value.trim());
}
